package aggregator

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vmcp/vmcp/pkg/config"
)

func ownPolicy(only bool, seen *[]string) Policy {
	return Policy{Strategy: config.StrategyPriority, Own: &Own{Only: only, Tools: func(c *Catalogue) []*mcp.Tool {
		for _, t := range c.Routable {
			*seen = append(*seen, t.Name)
		}
		return tools("search_tools", "call_tool")
	}}}
}

func names(ts []*mcp.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Name)
	}
	return out
}

// TestOwnToolsListedAloneStayRoutable: with Own.Only the list is vmcp's
// tools alone, every backend tool stays routable and callable, and Own's
// function sees the backend tools.
func TestOwnToolsListedAloneStayRoutable(t *testing.T) {
	var seen []string
	c, _, err := Build(ownPolicy(true, &seen), []Inventory{{Backend: "a", Tools: tools("x", "y")}, {Backend: "b", Tools: tools("z")}})
	require.NoError(t, err)
	assert.Equal(t, []string{"call_tool", "search_tools"}, toolNames(c))
	assert.Equal(t, []string{"x", "y", "z"}, names(c.Routable))
	assert.Equal(t, []string{"x", "y", "z"}, seen)
	callable, enc := c.Callable()
	assert.Equal(t, []string{"call_tool", "search_tools", "x", "y", "z"}, names(callable))
	assert.Equal(t, len(callable), enc.Len())
	_, r, ok := c.Tool("search_tools")
	assert.True(t, ok && r.Own())
	_, r, ok = c.Tool("z")
	assert.True(t, ok && !r.Own() && r.Backend == "b")
	assert.Equal(t, []string{"a", "b"}, c.Backends(KindTools), "vmcp is no backend")
}

// TestOwnToolsListedBesideAll: without Only the list holds both, sorted;
// an own tool's name shadows a backend tool, reported as a conflict.
func TestOwnToolsListedBesideAll(t *testing.T) {
	var seen []string
	c, conflicts, err := Build(ownPolicy(false, &seen), []Inventory{{Backend: "a", Tools: tools("x", "search_tools")}})
	require.NoError(t, err)
	assert.Equal(t, []string{"call_tool", "search_tools", "x"}, toolNames(c))
	assert.Equal(t, []string{"x"}, names(c.Routable))
	assert.Contains(t, conflicts, Conflict{KindTools, "search_tools", "vmcp", "a"})
	_, r, _ := c.Tool("search_tools")
	assert.True(t, r.Own())
}

// TestOwnOnlyChangeOfUnlistedToolsReachesListeners: a backend tool added
// under Own.Only changes no listed tool but is announced (the search index
// and the Legacy registry follow it).
func TestOwnOnlyChangeOfUnlistedToolsReachesListeners(t *testing.T) {
	var seen []string
	a := New(ownPolicy(true, &seen), nil)
	var kinds [][]Kind
	a.OnChange(func(_, _ *Catalogue, k []Kind) { kinds = append(kinds, k) })
	a.Update(Inventory{Backend: "a", Tools: tools("x")})
	a.Update(Inventory{Backend: "a", Tools: tools("x", "y")})
	require.Len(t, kinds, 2)
	assert.Equal(t, []Kind{KindTools}, kinds[1])
	assert.Equal(t, []string{"x", "y"}, names(a.Current().Routable))
}
