package policy

import (
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/identity"
)

var (
	admin = identity.Principal{Issuer: "i", Subject: "a", Claims: map[string]any{"groups": []any{"dev", "admin"}}}
	user  = identity.Principal{Issuer: "i", Subject: "b", Claims: map[string]any{"groups": []any{"dev"}, "level": float64(3)}}
)

func testPolicy() *Policy {
	return New(&config.Authorization{Rules: []config.AuthzRule{
		{When: config.AuthzMatch{Claims: map[string][]string{"groups": {"admin"}}}, Allow: &config.AuthzItems{Backends: []string{"*"}}},
		{Allow: &config.AuthzItems{Tools: []string{"alpha_*"}, Resources: []string{"file:///pub/*"}}, Deny: &config.AuthzItems{Tools: []string{"alpha_secret"}}},
		{When: config.AuthzMatch{Claims: map[string][]string{"level": {"3"}}}, Allow: &config.AuthzItems{Prompts: []string{"*greet*"}}},
	}})
}

func TestAllowsByClaimsAndPatterns(t *testing.T) {
	p := testPolicy()
	assert.True(t, p.Allows(admin, aggregator.KindTools, "beta", "beta_x"), "admin: every backend")
	assert.False(t, p.Allows(admin, aggregator.KindTools, "alpha", "alpha_secret"), "deny wins over allow")
	assert.True(t, p.Allows(user, aggregator.KindTools, "alpha", "alpha_echo"))
	assert.False(t, p.Allows(user, aggregator.KindTools, "beta", "beta_x"))
	assert.True(t, p.Allows(user, aggregator.KindPrompts, "beta", "say_greeting"), "numeric claim compared as a string")
	assert.True(t, p.Allows(user, aggregator.KindResources, "beta", "file:///pub/a"))
	assert.False(t, p.Allows(user, aggregator.KindResources, "beta", "file:///priv/a"))
	assert.False(t, p.Allows(identity.Principal{}, aggregator.KindPrompts, "beta", "greet"), "anonymous matches rules without claims only")
	assert.True(t, (*Policy)(nil).Allows(user, aggregator.KindTools, "beta", "beta_x"), "no policy: allow all")
	assert.Nil(t, New(nil))
}

func TestPattern(t *testing.T) {
	for p, cases := range map[pattern]map[string]bool{
		"a":     {"a": true, "ab": false, "": false},
		"*":     {"": true, "anything/at:all": true},
		"a*":    {"a": true, "abc": true, "ba": false},
		"*_x":   {"_x": true, "a_x": true, "a_xy": false},
		"a*b*c": {"abc": true, "aXbYc": true, "abbc": true, "ac": false, "abcb": false},
		"a*a":   {"a": false, "aa": true, "aba": true},
	} {
		for s, want := range cases {
			assert.Equal(t, want, p.match(s), "%q on %q", p, s)
		}
	}
}

func catalogue(t *testing.T, tools ...string) *aggregator.Catalogue {
	t.Helper()
	inv := []aggregator.Inventory{{Backend: "alpha"}, {Backend: "beta"}}
	for _, n := range tools {
		b := &inv[0]
		if n[0] == 'b' {
			b = &inv[1]
		}
		b.Tools = append(b.Tools, &mcp.Tool{Name: n, InputSchema: map[string]any{"type": "object"}})
	}
	inv[1].Resources = []*mcp.Resource{{URI: "file:///pub/r", Name: "r"}, {URI: "file:///priv/r", Name: "s"}}
	cat, _, err := aggregator.Build(aggregator.Policy{Order: []string{"alpha", "beta"}}, inv)
	require.NoError(t, err)
	return cat
}

func names(ts []*mcp.Tool) []string {
	out := []string{}
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

func TestViewFiltersSorted(t *testing.T) {
	p := testPolicy()
	cat := catalogue(t, "echo", "secret", "zed", "bx")
	assert.Equal(t, []string{"alpha_echo", "alpha_zed", "beta_bx"}, names(p.View(admin, cat).Tools))
	v := p.View(user, cat)
	assert.Equal(t, []string{"alpha_echo", "alpha_zed"}, names(v.Tools))
	require.Len(t, v.Resources, 1)
	assert.Equal(t, "file:///pub/r", v.Resources[0].URI)
	assert.Same(t, v, p.View(user, cat), "one view per signature and catalogue")
	assert.Len(t, (*Policy)(nil).View(user, cat).Tools, 4)
}

func TestChangedOnlyForAffectedPrincipals(t *testing.T) {
	p := testPolicy()
	old := catalogue(t, "echo", "bx")
	cur := catalogue(t, "echo", "bx", "by") // a beta tool: only admin sees it
	tools, prompts, res := p.Changed(admin, old, cur)
	assert.True(t, tools)
	assert.False(t, prompts || res)
	tools, prompts, res = p.Changed(user, old, cur)
	assert.False(t, tools || prompts || res, "user's view did not change")
	tools, _, _ = (*Policy)(nil).Changed(user, old, cur)
	assert.True(t, tools)
}

// The cache keeps the views of the last two catalogues only: a stream of
// catalogue swaps must not keep every old catalogue alive.
func TestViewCacheKeepsTwoCatalogues(t *testing.T) {
	p := testPolicy()
	cats := []*aggregator.Catalogue{catalogue(t, "echo"), catalogue(t, "echo"), catalogue(t, "echo")}
	v0 := p.View(user, cats[0])
	p.View(user, cats[1])
	assert.Same(t, v0, p.View(user, cats[0]), "cats[0] used last")
	p.View(user, cats[2]) // evicts cats[1], the least recently used
	p.views.mu.Lock()
	kept := slices.Clone(p.views.cats)
	n := len(p.views.m)
	p.views.mu.Unlock()
	assert.Equal(t, []*aggregator.Catalogue{cats[0], cats[2]}, kept)
	assert.Equal(t, 2, n)
}

func TestMatcherUsesTheAuthorizationRulesSemantics(t *testing.T) {
	m := NewMatcher(map[string][]string{"groups": {"free"}}, &config.AuthzItems{Tools: []string{"search_*"}, Backends: []string{"b"}})
	free := identity.Principal{Subject: "u", Issuer: "i", Claims: map[string]any{"groups": []any{"free", "x"}}}
	paid := identity.Principal{Subject: "v", Issuer: "i", Claims: map[string]any{"groups": []any{"paid"}}}
	assert.True(t, m.Principal(free))
	assert.False(t, m.Principal(paid))
	assert.False(t, m.Principal(identity.Principal{}), "anonymous holds no claim")
	assert.True(t, m.Item(aggregator.KindTools, "a", "search_web"))
	assert.False(t, m.Item(aggregator.KindTools, "a", "fetch"))
	assert.False(t, m.Item(aggregator.KindPrompts, "a", "search_web"), "a tool pattern names no prompt")
	assert.True(t, m.Item(aggregator.KindPrompts, "b", "p"), "a backend pattern names all of its items")
	assert.True(t, m.Item("completion", "b", ""), "a completion matches by its backend")
	assert.False(t, m.Item("completion", "a", ""))
	assert.True(t, NewMatcher(nil, &config.AuthzItems{Tools: []string{"*"}}).Principal(identity.Principal{}), "no claims: every principal")
}
