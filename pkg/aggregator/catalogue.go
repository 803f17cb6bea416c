package aggregator

import (
	"cmp"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"

	"github.com/vmcp/vmcp/pkg/config"
)

// DefaultPrefixFormat is the PrefixFormat used when Policy.PrefixFormat is empty.
const DefaultPrefixFormat = "{backend}_{name}"

// Policy is the conflict-resolution configuration, built by the caller from
// config.Aggregation plus the configured backend names (Order).
type Policy struct {
	Strategy     string                             // config.StrategyPrefix (default when empty) | StrategyPriority | StrategyManual
	PrefixFormat string                             // default DefaultPrefixFormat; "{backend}" and "{name}" are replaced
	Order        []string                           // all configured backend names in config order (tie-break, default priority)
	Priority     []string                           // priority strategy: first listed wins; unlisted follow in Order
	Overrides    map[string]config.BackendOverrides // backend -> tool/prompt overrides keyed by original name
	Own          *Own                               // vmcp's own tools (nil: none)
}

// Conflict records a resource URI or template (Key) offered more than once;
// Winner keeps it and Loser's copy is not advertised. A duplicate tool or
// prompt name inside one backend is reported with Winner == Loser; an invalid
// URI template is reported with an empty Winner. The caller logs conflicts.
type Conflict struct {
	Kind          Kind
	Key           string
	Winner, Loser string
}

// ErrNameCollision is wrapped by Build when two tools or prompts still share
// an advertised name after renaming; the message names both backends.
var ErrNameCollision = errors.New("name collision after conflict resolution")

// ErrUnresolvedConflict is wrapped by Build when the manual strategy leaves
// two tools or prompts with the same name; the message names both backends.
var ErrUnresolvedConflict = errors.New("unresolved conflict")

// Catalogue is an immutable merged snapshot with its routing table. It is
// safe for concurrent reads; callers must not modify the slices or items.
// Tools and Prompts are sorted by advertised name, Resources by URI and
// Templates by URITemplate.
type Catalogue struct {
	Tools     []*mcp.Tool
	Resources []*mcp.Resource
	Templates []*mcp.ResourceTemplate
	Prompts   []*mcp.Prompt
	// Routable is every backend tool a call can name, sorted: Tools less
	// vmcp's own, or with Own.Only the tools that Tools does not list.
	Routable []*mcp.Tool

	tools     map[string]toolEntry
	prompts   map[string]promptEntry
	resources map[string]Route // URI -> route
	templates map[string]Route // URI template -> route
	matchers  []matcher        // templates in winner order
	backends  map[Kind][]string
	descs     map[string]string // backend → Inventory.Description, where not empty

	enc encodings // the lists as JSON, built on first use (encoded.go)

	own     []*mcp.Tool // vmcp's own tools (own.go)
	ownOnly bool        // Own.Only: Tools lists own alone
	call    callable
}

type toolEntry struct {
	tool  *mcp.Tool
	route Route
}

type promptEntry struct {
	prompt *mcp.Prompt
	route  Route
}

type matcher struct {
	re      *regexp.Regexp
	backend string
}

var emptyCatalogue = &Catalogue{
	Tools:     []*mcp.Tool{},
	Resources: []*mcp.Resource{},
	Templates: []*mcp.ResourceTemplate{},
	Prompts:   []*mcp.Prompt{},
	backends:  map[Kind][]string{},
}

// Empty returns a catalogue with no items and no routes.
func Empty() *Catalogue { return emptyCatalogue }

// Tool returns the advertised tool named name and where to route calls to it
// (Route.Name is the backend's original tool name).
func (c *Catalogue) Tool(name string) (*mcp.Tool, Route, bool) {
	e, ok := c.tools[name]
	return e.tool, e.route, ok
}

// Prompt returns the advertised prompt named name and where to route gets
// of it (Route.Name is the backend's original prompt name).
func (c *Catalogue) Prompt(name string) (*mcp.Prompt, Route, bool) {
	e, ok := c.prompts[name]
	return e.prompt, e.route, ok
}

// Resource routes a resource URI: an exact resource wins; otherwise the
// first template (in winner order) whose RFC 6570 pattern matches uri.
// URIs are never rewritten, so Route.Name is uri itself.
func (c *Catalogue) Resource(uri string) (Route, bool) {
	if r, ok := c.resources[uri]; ok {
		return r, true
	}
	for _, m := range c.matchers {
		if m.re.MatchString(uri) {
			return Route{Backend: m.backend, Name: uri}, true
		}
	}
	return Route{}, false
}

// Template routes an advertised URI template string to its backend.
func (c *Catalogue) Template(uriTemplate string) (Route, bool) {
	r, ok := c.templates[uriTemplate]
	return r, ok
}

// Backends returns the backends contributing at least one advertised item of
// kind k, in configured order (unconfigured backends last, by name).
func (c *Catalogue) Backends(k Kind) []string {
	return slices.Clone(c.backends[k])
}

// Build merges the inventories under policy p. A tool or prompt name that
// still collides after conflict resolution is withheld (every claimant of
// it) and named in err (ErrNameCollision, or ErrUnresolvedConflict under
// manual), with the rest of the catalogue returned; resource and template
// conflicts are resolved by order and reported. Other errors return no
// catalogue. Inputs are never mutated and the result does not depend on
// the order of inv.
func Build(p Policy, inv []Inventory) (*Catalogue, []Conflict, error) {
	b, err := newBuilder(p, inv)
	if err != nil {
		return nil, nil, err
	}
	c := &Catalogue{
		tools:     map[string]toolEntry{},
		prompts:   map[string]promptEntry{},
		resources: map[string]Route{},
		templates: map[string]Route{},
		backends:  map[Kind][]string{},
	}
	err = errors.Join(b.buildTools(c), b.buildPrompts(c))
	b.buildResources(c)
	b.buildTemplates(c)
	b.fillBackends(c)
	b.fillDescriptions(c)
	b.addOwn(c)
	return c, b.conflicts, err
}

// builder holds the per-Build state: inventories sorted by winner rank.
type builder struct {
	p         Policy
	inv       []Inventory // sorted by win rank
	cfgRank   map[string]int
	winRank   map[string]int
	conflicts []Conflict
}

func newBuilder(p Policy, inv []Inventory) (*builder, error) {
	if p.Strategy == "" {
		p.Strategy = config.StrategyPrefix
	}
	switch p.Strategy {
	case config.StrategyPrefix, config.StrategyPriority, config.StrategyManual:
	default:
		return nil, fmt.Errorf("aggregator: unknown conflict resolution strategy %q", p.Strategy)
	}
	if p.PrefixFormat == "" {
		p.PrefixFormat = DefaultPrefixFormat
	}
	b := &builder{p: p, inv: slices.Clone(inv)}
	seen := map[string]bool{}
	var extra []string
	for _, in := range inv {
		if seen[in.Backend] {
			return nil, fmt.Errorf("aggregator: duplicate inventory for backend %q", in.Backend)
		}
		seen[in.Backend] = true
		if !slices.Contains(p.Order, in.Backend) {
			extra = append(extra, in.Backend)
		}
	}
	slices.Sort(extra)
	b.cfgRank = rank(p.Order, extra)
	if p.Strategy == config.StrategyPriority {
		b.winRank = rank(p.Priority, p.Order, extra)
	} else {
		b.winRank = b.cfgRank
	}
	slices.SortFunc(b.inv, func(x, y Inventory) int {
		return cmp.Compare(b.winRank[x.Backend], b.winRank[y.Backend])
	})
	return b, nil
}

// rank numbers names by first appearance across lists.
func rank(lists ...[]string) map[string]int {
	r := map[string]int{}
	for _, l := range lists {
		for _, n := range l {
			if _, ok := r[n]; !ok {
				r[n] = len(r)
			}
		}
	}
	return r
}

func (b *builder) prefixed(backend, name string) string {
	return strings.NewReplacer("{backend}", backend, "{name}", name).Replace(b.p.PrefixFormat)
}

// BackendDescription is what backend offers, in words (its inventory's
// Description), or "".
func (c *Catalogue) BackendDescription(backend string) string { return c.descs[backend] }

// fillDescriptions records the inventories' non-empty descriptions.
func (b *builder) fillDescriptions(c *Catalogue) {
	for _, in := range b.inv {
		if in.Description != "" {
			if c.descs == nil {
				c.descs = map[string]string{}
			}
			c.descs[in.Backend] = in.Description
		}
	}
}

func (b *builder) fillBackends(c *Catalogue) {
	add := func(k Kind, backend string) {
		if !slices.Contains(c.backends[k], backend) {
			c.backends[k] = append(c.backends[k], backend)
		}
	}
	for _, e := range c.tools {
		add(KindTools, e.route.Backend)
	}
	for _, e := range c.prompts {
		add(KindPrompts, e.route.Backend)
	}
	for _, r := range c.resources {
		add(KindResources, r.Backend)
	}
	for _, r := range c.templates {
		add(KindTemplates, r.Backend)
	}
	for k, l := range c.backends {
		slices.SortFunc(l, func(x, y string) int { return cmp.Compare(b.cfgRank[x], b.cfgRank[y]) })
		c.backends[k] = l
	}
}

func (b *builder) buildResources(c *Catalogue) {
	for _, in := range b.inv {
		for _, r := range in.Resources {
			if r == nil {
				continue
			}
			if w, ok := c.resources[r.URI]; ok {
				b.conflicts = append(b.conflicts, Conflict{KindResources, r.URI, w.Backend, in.Backend})
				continue
			}
			c.resources[r.URI] = Route{Backend: in.Backend, Name: r.URI}
			c.Resources = append(c.Resources, r)
		}
	}
	if c.Resources == nil {
		c.Resources = []*mcp.Resource{}
	}
	slices.SortFunc(c.Resources, func(x, y *mcp.Resource) int { return cmp.Compare(x.URI, y.URI) })
}

func (b *builder) buildTemplates(c *Catalogue) {
	for _, in := range b.inv {
		for _, t := range in.Templates {
			if t == nil {
				continue
			}
			if w, ok := c.templates[t.URITemplate]; ok {
				b.conflicts = append(b.conflicts, Conflict{KindTemplates, t.URITemplate, w.Backend, in.Backend})
				continue
			}
			re := compileTemplate(t.URITemplate)
			if re == nil {
				b.conflicts = append(b.conflicts, Conflict{KindTemplates, t.URITemplate, "", in.Backend})
				continue
			}
			c.templates[t.URITemplate] = Route{Backend: in.Backend, Name: t.URITemplate}
			c.matchers = append(c.matchers, matcher{re: re, backend: in.Backend})
			c.Templates = append(c.Templates, t)
		}
	}
	if c.Templates == nil {
		c.Templates = []*mcp.ResourceTemplate{}
	}
	slices.SortFunc(c.Templates, func(x, y *mcp.ResourceTemplate) int {
		return cmp.Compare(x.URITemplate, y.URITemplate)
	})
}

// compileTemplate returns the matching regexp of an RFC 6570 template, or
// nil if the template is invalid.
func compileTemplate(s string) (re *regexp.Regexp) {
	t, err := uritemplate.New(s)
	if err != nil {
		return nil
	}
	defer func() {
		if recover() != nil { // Regexp uses MustCompile
			re = nil
		}
	}()
	return t.Regexp()
}
