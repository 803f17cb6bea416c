// Package policy decides, per principal, which tools, prompts and
// resources of the catalogue it may see and use (MCP has no access model
// of its own; this is vmcp's, configured in config.Authorization). Lists
// are filtered through View, every routed request is checked with Allows,
// and list_changed reaches a principal only when Changed says its own view
// changed. A nil *Policy allows every principal everything.
package policy

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/identity"
)

// Policy is the compiled rule list: an item is allowed if a rule matching
// the principal allows it and no rule matching the principal denies it.
// It is safe for concurrent use.
type Policy struct {
	rules []rule
	views viewCache
}

type rule struct {
	claims      map[string][]string // every claim must hold one of its values
	allow, deny items
}

// items are compiled patterns per kind; backends apply to every kind.
type items struct {
	backends, tools, prompts, resources []pattern
}

// New compiles the configured authorization (validated by pkg/config);
// nil gives a nil *Policy, which allows everything.
func New(a *config.Authorization) *Policy {
	if a == nil {
		return nil
	}
	p := &Policy{}
	for _, r := range a.Rules {
		p.rules = append(p.rules, rule{claims: r.When.Claims, allow: compile(r.Allow), deny: compile(r.Deny)})
	}
	return p
}

func compile(it *config.AuthzItems) items {
	if it == nil {
		return items{}
	}
	c := func(ps []string) []pattern {
		out := make([]pattern, len(ps))
		for i, s := range ps {
			out[i] = pattern(s)
		}
		return out
	}
	return items{backends: c(it.Backends), tools: c(it.Tools), prompts: c(it.Prompts), resources: c(it.Resources)}
}

// Allows reports whether principal pr may see and use the item of kind k
// (aggregator.KindTools, KindPrompts, KindResources, KindTemplates)
// advertised as name (a tool or prompt name, a URI or URI template) and
// served by backend. A nil Policy allows everything.
func (p *Policy) Allows(pr identity.Principal, k aggregator.Kind, backend, name string) bool {
	if p == nil {
		return true
	}
	ok, _ := p.allows(p.signature(pr), k, backend, name)
	return ok
}

// Decide is Allows naming the rule that decided (its 0-based index in
// authorization.rules): the first matching rule that denies the item,
// else the first that allows it; -1 when no rule allows it (or p is nil).
func (p *Policy) Decide(pr identity.Principal, k aggregator.Kind, backend, name string) (allowed bool, rule int) {
	if p == nil {
		return true, -1
	}
	return p.allows(p.signature(pr), k, backend, name)
}

// allows evaluates the rules selected by sig (signature) on one item; rule
// is the one that decided (-1: none allowed it).
func (p *Policy) allows(sig string, k aggregator.Kind, backend, name string) (allowed bool, rule int) {
	rule = -1
	for i, r := range p.rules {
		if sig[i] != '1' {
			continue
		}
		if r.deny.match(k, backend, name) {
			return false, i
		}
		if rule < 0 && r.allow.match(k, backend, name) {
			rule = i
		}
	}
	return rule >= 0, rule
}

func (it *items) match(k aggregator.Kind, backend, name string) bool {
	if anyMatch(it.backends, backend) {
		return true
	}
	switch k {
	case aggregator.KindTools:
		return anyMatch(it.tools, name)
	case aggregator.KindPrompts:
		return anyMatch(it.prompts, name)
	case aggregator.KindResources, aggregator.KindTemplates:
		return anyMatch(it.resources, name)
	}
	return false
}

func anyMatch(ps []pattern, s string) bool {
	return slices.ContainsFunc(ps, func(p pattern) bool { return p.match(s) })
}

// signature is which rules apply to pr, one '0' or '1' per rule: two
// principals with the same signature have the same view.
func (p *Policy) signature(pr identity.Principal) string {
	b := make([]byte, len(p.rules))
	for i, r := range p.rules {
		b[i] = '0'
		if matchClaims(r.claims, pr.Claims) {
			b[i] = '1'
		}
	}
	return string(b)
}

// matchClaims reports whether every wanted claim holds one of its values:
// a scalar claim equals one, a list claim contains one (compared as
// strings, so true and 42 match "true" and "42").
func matchClaims(want map[string][]string, have map[string]any) bool {
	for name, vals := range want {
		v, ok := have[name]
		if !ok || !claimHolds(v, vals) {
			return false
		}
	}
	return true
}

func claimHolds(v any, vals []string) bool {
	switch x := v.(type) {
	case []any:
		return slices.ContainsFunc(x, func(e any) bool { return claimHolds(e, vals) })
	case []string:
		return slices.ContainsFunc(x, func(e string) bool { return slices.Contains(vals, e) })
	case string:
		return slices.Contains(vals, x)
	case nil, map[string]any:
		return false
	default:
		return slices.Contains(vals, fmt.Sprint(x))
	}
}

// pattern is a name pattern: "*" matches any run of characters, every
// other character itself.
type pattern string

func (p pattern) match(s string) bool {
	parts := strings.Split(string(p), "*")
	if len(parts) == 1 {
		return s == string(p)
	}
	if !strings.HasPrefix(s, parts[0]) {
		return false
	}
	s = s[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, mid := range parts[1 : len(parts)-1] {
		i := strings.Index(s, mid)
		if i < 0 {
			return false
		}
		s = s[i+len(mid):]
	}
	return len(s) >= len(last) && strings.HasSuffix(s, last)
}

// permits is allows without the deciding rule.
func (p *Policy) permits(sig string, k aggregator.Kind, backend, name string) bool {
	ok, _ := p.allows(sig, k, backend, name)
	return ok
}
