package policy

import (
	"crypto/sha256"
	"encoding/json"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/identity"
)

// View is one principal's part of a catalogue: the four sorted lists
// filtered by the policy (sorted as the catalogue, so keyset cursors over
// them stay correct). Callers must not modify it.
type View struct {
	Tools     []*mcp.Tool
	Resources []*mcp.Resource
	Templates []*mcp.ResourceTemplate
	Prompts   []*mcp.Prompt

	once    sync.Once
	digests [3][sha256.Size]byte // tools, prompts, resources+templates (as list_changed names them)

	cat *aggregator.Catalogue // the catalogue the lists are of (nil: a view made by hand)
	idx indices               // filtered views: each item's index in cat's list
}

// The list_changed kinds a View's digest covers.
const (
	ListTools     = 0 // notifications/tools/list_changed
	ListPrompts   = 1 // notifications/prompts/list_changed
	ListResources = 2 // notifications/resources/list_changed (resources and templates)
)

// Digest is a fingerprint of the list kind (ListTools, ListPrompts or
// ListResources) as this view shows it: equal digests, equal lists.
func (v *View) Digest(kind int) [sha256.Size]byte {
	v.once.Do(func() {
		v.digests[ListTools] = digest(v.Tools)
		v.digests[ListPrompts] = digest(v.Prompts)
		v.digests[ListResources] = digest([]any{v.Resources, v.Templates})
	})
	return v.digests[kind]
}

func digest(x any) [sha256.Size]byte {
	b, _ := json.Marshal(x) // SDK types only; an error hashes as empty
	return sha256.Sum256(b)
}

// maxSignatures bounds the views cached per catalogue (one per distinct
// set of matching rules); keptCatalogues is how many catalogues keep
// theirs (the current one and the one before, for Changed), so an old
// catalogue is never kept alive by the cache.
const (
	maxSignatures  = 256
	keptCatalogues = 2
)

// viewCache keeps the views computed lately: principals with the same
// signature share one, per catalogue, for the catalogues used last.
type viewCache struct {
	mu   sync.Mutex
	cats []*aggregator.Catalogue // most recently used last
	m    map[*aggregator.Catalogue]map[string]*View
}

// get returns the cached view, marking cat as used.
func (c *viewCache) get(cat *aggregator.Catalogue, sig string) *View {
	c.mu.Lock()
	defer c.mu.Unlock()
	if i := slices.Index(c.cats, cat); i >= 0 && i != len(c.cats)-1 {
		c.cats = append(slices.Delete(c.cats, i, i+1), cat)
	}
	return c.m[cat][sig]
}

// put caches v, forgetting the least recently used catalogue beyond
// keptCatalogues and every view of cat beyond maxSignatures.
func (c *viewCache) put(cat *aggregator.Catalogue, sig string, v *View) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[*aggregator.Catalogue]map[string]*View{}
	}
	views := c.m[cat]
	if views == nil || len(views) >= maxSignatures {
		views = map[string]*View{}
		c.m[cat] = views
		if !slices.Contains(c.cats, cat) {
			c.cats = append(c.cats, cat)
		}
		for len(c.cats) > keptCatalogues {
			delete(c.m, c.cats[0])
			c.cats = c.cats[1:]
		}
	}
	views[sig] = v
}

// View returns pr's part of cat. A nil Policy returns the whole catalogue
// (sharing its slices, no copy).
func (p *Policy) View(pr identity.Principal, cat *aggregator.Catalogue) *View {
	if p == nil {
		return &View{Tools: cat.Tools, Resources: cat.Resources, Templates: cat.Templates, Prompts: cat.Prompts, cat: cat}
	}
	sig := p.signature(pr)
	if v := p.views.get(cat, sig); v != nil {
		return v
	}
	v := p.filter(sig, cat)
	p.views.put(cat, sig, v)
	return v
}

// filter builds the view of the rules selected by sig.
func (p *Policy) filter(sig string, cat *aggregator.Catalogue) *View {
	v := &View{cat: cat}
	v.Tools, v.idx.tools = keep(cat.Tools, func(t *mcp.Tool) bool {
		_, r, _ := cat.Tool(t.Name)
		return r.Own() || p.permits(sig, aggregator.KindTools, r.Backend, t.Name) // vmcp's own tools: every principal
	})
	v.Prompts, v.idx.prompts = keep(cat.Prompts, func(x *mcp.Prompt) bool {
		_, r, _ := cat.Prompt(x.Name)
		return p.permits(sig, aggregator.KindPrompts, r.Backend, x.Name)
	})
	v.Resources, v.idx.resources = keep(cat.Resources, func(x *mcp.Resource) bool {
		r, _ := cat.Resource(x.URI)
		return p.permits(sig, aggregator.KindResources, r.Backend, x.URI)
	})
	v.Templates, v.idx.templates = keep(cat.Templates, func(x *mcp.ResourceTemplate) bool {
		r, _ := cat.Template(x.URITemplate)
		return p.permits(sig, aggregator.KindTemplates, r.Backend, x.URITemplate)
	})
	v.idx.filtered = true
	return v
}

// keep returns the items ok accepts, in order (never nil), and their
// indices in all.
func keep[T any](all []T, ok func(T) bool) ([]T, []int32) {
	out, idx := make([]T, 0, len(all)), make([]int32, 0, len(all))
	for i, x := range all {
		if ok(x) {
			out, idx = append(out, x), append(idx, int32(i))
		}
	}
	return out, idx
}

// Changed reports which of pr's lists differ between catalogues old and
// cur (resources covers resource templates too), so list_changed reaches a
// principal only when its own view changed. A nil Policy compares whole
// catalogues.
func (p *Policy) Changed(pr identity.Principal, old, cur *aggregator.Catalogue) (tools, prompts, resources bool) {
	if old == nil {
		return true, true, true
	}
	a, b := p.View(pr, old), p.View(pr, cur)
	return a.Digest(ListTools) != b.Digest(ListTools), a.Digest(ListPrompts) != b.Digest(ListPrompts),
		a.Digest(ListResources) != b.Digest(ListResources)
}
