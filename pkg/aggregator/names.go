package aggregator

import (
	"cmp"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vmcp/vmcp/pkg/config"
)

// cand is one tool or prompt on its way to an advertised name.
type cand struct {
	backend string
	orig    string // the backend's own name
	name    string // advertised name
	desc    string // override description, if redesc
	fixed   bool   // renamed by an override: never prefixed
	redesc  bool
	src     int // index into the kind's source items
}

// collect turns each backend's items into candidates, in win-rank order of
// backends and name order within a backend. A name listed twice by the same
// backend keeps its first occurrence and is reported as a Conflict.
func (b *builder) collect(kind Kind, names func(Inventory) []string,
	overrides func(config.BackendOverrides) map[string]config.Override) []cand {
	var out []cand
	src := 0
	for _, in := range b.inv {
		var cs []cand
		seen := map[string]bool{}
		for _, n := range names(in) {
			if seen[n] {
				b.conflicts = append(b.conflicts, Conflict{kind, n, in.Backend, in.Backend})
				src++
				continue
			}
			seen[n] = true
			c := cand{backend: in.Backend, orig: n, name: n, src: src}
			src++
			if o, ok := overrides(b.p.Overrides[in.Backend])[n]; ok {
				if o.Name != "" {
					c.name, c.fixed = o.Name, true
				}
				if o.Description != "" {
					c.desc, c.redesc = o.Description, true
				}
			}
			cs = append(cs, c)
		}
		slices.SortStableFunc(cs, func(x, y cand) int { return cmp.Compare(x.orig, y.orig) })
		out = append(out, cs...)
	}
	return out
}

// resolve assigns advertised names to cs (ordered by win rank) according to
// the strategy, makes each valid (ValidName), and fails if two candidates
// end up with the same name.
func (b *builder) resolve(kind string, cs []cand) ([]cand, error) {
	switch b.p.Strategy {
	case config.StrategyPrefix:
		for i := range cs {
			if !cs[i].fixed {
				cs[i].name = b.prefixed(cs[i].backend, cs[i].orig)
			}
		}
	case config.StrategyPriority:
		// The bare name goes to the first override claiming it, else to the
		// highest-priority claimer; other non-overridden claimers get prefixed.
		keeper := map[string]int{}
		for i, c := range cs {
			if k, ok := keeper[c.name]; !ok || (c.fixed && !cs[k].fixed) {
				keeper[c.name] = i
			}
		}
		for i := range cs {
			if k := keeper[cs[i].name]; k != i && !cs[i].fixed {
				cs[i].name = b.prefixed(cs[i].backend, cs[i].orig)
			}
		}
	}
	for i := range cs {
		cs[i].name = ValidName(cs[i].name)
	}
	sentinel := ErrNameCollision
	if b.p.Strategy == config.StrategyManual {
		sentinel = ErrUnresolvedConflict
	}
	claims := make(map[string][]int, len(cs))
	for i, c := range cs {
		claims[c.name] = append(claims[c.name], i)
	}
	var errs []error
	kept := cs[:0:0]
	for i, c := range cs {
		idx := claims[c.name]
		if len(idx) == 1 {
			kept = append(kept, c)
			continue
		}
		if idx[0] == i { // report each collision once, naming its first two claimants
			o := cs[idx[1]]
			errs = append(errs, fmt.Errorf("%w: %s %q offered by backend %q (as %q) and backend %q (as %q); withheld",
				sentinel, kind, c.name, c.backend, c.orig, o.backend, o.orig))
		}
	}
	return kept, errors.Join(errs...)
}

func (b *builder) buildTools(c *Catalogue) error {
	var src []*mcp.Tool
	cs := b.collect(KindTools, func(in Inventory) []string {
		return itemNames(in.Tools, &src, func(t *mcp.Tool) string { return t.Name })
	}, func(o config.BackendOverrides) map[string]config.Override { return o.Tools })
	cs, err := b.resolve("tool", cs)
	c.Tools = make([]*mcp.Tool, 0, len(cs))
	for _, x := range cs {
		t := *src[x.src]
		t.Name = x.name
		if x.redesc {
			t.Description = x.desc
		}
		if t.InputSchema == nil {
			t.InputSchema = map[string]any{"type": "object"}
		}
		c.Tools = append(c.Tools, &t)
		c.tools[x.name] = toolEntry{tool: &t, route: Route{Backend: x.backend, Name: x.orig}}
	}
	slices.SortFunc(c.Tools, func(x, y *mcp.Tool) int { return cmp.Compare(x.Name, y.Name) })
	return err
}

func (b *builder) buildPrompts(c *Catalogue) error {
	var src []*mcp.Prompt
	cs := b.collect(KindPrompts, func(in Inventory) []string {
		return itemNames(in.Prompts, &src, func(p *mcp.Prompt) string { return p.Name })
	}, func(o config.BackendOverrides) map[string]config.Override { return o.Prompts })
	cs, err := b.resolve("prompt", cs)
	c.Prompts = make([]*mcp.Prompt, 0, len(cs))
	for _, x := range cs {
		p := *src[x.src]
		p.Name = x.name
		if x.redesc {
			p.Description = x.desc
		}
		c.Prompts = append(c.Prompts, &p)
		c.prompts[x.name] = promptEntry{prompt: &p, route: Route{Backend: x.backend, Name: x.orig}}
	}
	slices.SortFunc(c.Prompts, func(x, y *mcp.Prompt) int { return cmp.Compare(x.Name, y.Name) })
	return err
}

// itemNames appends the non-nil items to *src and returns their names, so
// that candidate src indices line up with *src.
func itemNames[T any](items []*T, src *[]*T, name func(*T) string) []string {
	names := make([]string, 0, len(items))
	for _, it := range items {
		if it == nil {
			continue
		}
		*src = append(*src, it)
		names = append(names, name(it))
	}
	return names
}
