package policy

import (
	"crypto/sha256"
	"encoding/json"
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

// maxViews bounds the cache of views (per catalogue and rule signature).
const maxViews = 256

type viewKey struct {
	cat *aggregator.Catalogue
	sig string
}

// viewCache keeps the views computed lately: principals with the same
// signature share one, and a catalogue swap makes new keys.
type viewCache struct {
	mu sync.Mutex
	m  map[viewKey]*View
}

// View returns pr's part of cat. A nil Policy returns the whole catalogue
// (sharing its slices, no copy).
func (p *Policy) View(pr identity.Principal, cat *aggregator.Catalogue) *View {
	if p == nil {
		return &View{Tools: cat.Tools, Resources: cat.Resources, Templates: cat.Templates, Prompts: cat.Prompts}
	}
	k := viewKey{cat: cat, sig: p.signature(pr)}
	p.views.mu.Lock()
	v := p.views.m[k]
	p.views.mu.Unlock()
	if v != nil {
		return v
	}
	v = p.filter(k.sig, cat)
	p.views.mu.Lock()
	defer p.views.mu.Unlock()
	if p.views.m == nil || len(p.views.m) >= maxViews {
		p.views.m = map[viewKey]*View{}
	}
	p.views.m[k] = v
	return v
}

// filter builds the view of the rules selected by sig.
func (p *Policy) filter(sig string, cat *aggregator.Catalogue) *View {
	return &View{
		Tools: keep(cat.Tools, func(t *mcp.Tool) bool {
			_, r, _ := cat.Tool(t.Name)
			return p.allows(sig, aggregator.KindTools, r.Backend, t.Name)
		}),
		Prompts: keep(cat.Prompts, func(x *mcp.Prompt) bool {
			_, r, _ := cat.Prompt(x.Name)
			return p.allows(sig, aggregator.KindPrompts, r.Backend, x.Name)
		}),
		Resources: keep(cat.Resources, func(x *mcp.Resource) bool {
			r, _ := cat.Resource(x.URI)
			return p.allows(sig, aggregator.KindResources, r.Backend, x.URI)
		}),
		Templates: keep(cat.Templates, func(x *mcp.ResourceTemplate) bool {
			r, _ := cat.Template(x.URITemplate)
			return p.allows(sig, aggregator.KindTemplates, r.Backend, x.URITemplate)
		}),
	}
}

// keep returns the items ok accepts, in order (never nil).
func keep[T any](all []T, ok func(T) bool) []T {
	out := make([]T, 0, len(all))
	for _, x := range all {
		if ok(x) {
			out = append(out, x)
		}
	}
	return out
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
