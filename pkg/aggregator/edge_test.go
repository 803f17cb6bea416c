package aggregator

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuildEdgeCases(t *testing.T) {
	_, _, err := Build(Policy{Strategy: "bogus"}, nil)
	assert.Error(t, err)

	_, _, err = Build(Policy{}, []Inventory{{Backend: "a"}, {Backend: "a"}})
	assert.ErrorContains(t, err, "duplicate inventory")

	c, conflicts, err := Build(Policy{Order: []string{"a"}}, []Inventory{
		{Backend: "a", Tools: []*mcp.Tool{nil, {Name: "t", Description: "1"}, {Name: "t", Description: "2"}}},
	})
	require.NoError(t, err)
	assert.Equal(t, []Conflict{{KindTools, "t", "a", "a"}}, conflicts)
	require.Len(t, c.Tools, 1)
	assert.Equal(t, "1", c.Tools[0].Description)

	e := Empty()
	assert.Empty(t, e.Tools)
	_, _, ok := e.Tool("x")
	assert.False(t, ok)
	_, ok = e.Resource("file:///x")
	assert.False(t, ok)
	assert.Empty(t, e.Backends(KindTools))
}

func TestLookupsDoNotAllocate(t *testing.T) {
	c, _, err := Build(Policy{Order: []string{"a"}}, []Inventory{{Backend: "a", Tools: tools("t"),
		Prompts:   prompts("p"),
		Resources: []*mcp.Resource{{URI: "file:///r"}},
		Templates: []*mcp.ResourceTemplate{{URITemplate: "file:///x/{name}"}}}})
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(100, func() {
		c.Tool("a_t")
		c.Prompt("a_p")
		c.Resource("file:///r")
		c.Template("file:///x/{name}")
	})
	assert.Zero(t, allocs)
}
