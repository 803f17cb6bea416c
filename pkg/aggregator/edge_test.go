package aggregator

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestBuildRefusedAnUnknownStrategy(t *testing.T) {
	_, _, err := Build(Policy{Strategy: "bogus"}, nil)
	assert.Error(t, err)
}

func TestBuildRefusedTwoInventoriesOfOneBackend(t *testing.T) {
	_, _, err := Build(Policy{}, []Inventory{{Backend: "a"}, {Backend: "a"}})
	assert.ErrorContains(t, err, "duplicate inventory")
}

// A backend listing a tool name twice (and a nil tool) must not collide
// with itself: its first copy wins and the duplicate is reported.
func TestBuildDuplicateToolInOneBackendKeepsTheFirst(t *testing.T) {
	c, conflicts, err := Build(Policy{Order: []string{"a"}}, []Inventory{
		{Backend: "a", Tools: []*mcp.Tool{nil, {Name: "t", Description: "1"}, {Name: "t", Description: "2"}}},
	})
	require.NoError(t, err)
	assert.Equal(t, []Conflict{{KindTools, "t", "a", "a"}}, conflicts)
	require.Len(t, c.Tools, 1)
	assert.Equal(t, "1", c.Tools[0].Description)
}

func TestEmptyCatalogueRoutesNothing(t *testing.T) {
	e := Empty()
	assert.Empty(t, e.Tools)
	_, _, ok := e.Tool("x")
	assert.False(t, ok)
	_, ok = e.Resource("file:///x")
	assert.False(t, ok)
	assert.Empty(t, e.Backends(KindTools))
}

// A tool whose input schema the go-sdk registry refuses (type "string")
// was listed on Modern and callable on Legacy while missing from Legacy
// lists; it is now withheld from the inventory, with its reason.
func TestRegistryRefusedToolIsWithheldFromTheInventory(t *testing.T) {
	in := Inventory{Backend: "a", Tools: []*mcp.Tool{
		{Name: "ok"},
		{Name: "bad", InputSchema: map[string]any{"type": "string"}},
	}}
	out, refused := refuseInvalid(in)
	require.Len(t, out.Tools, 1)
	assert.Equal(t, "ok", out.Tools[0].Name)
	require.Len(t, refused, 1)
	assert.Equal(t, "bad", refused[0].Name)
	assert.Contains(t, refused[0].Reason, "object")
	assert.Len(t, in.Tools, 2, "the input inventory is not mutated")
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

// Each registry check makes the go-sdk allocate tens of KB: a backend
// relisting thousands of tools re-checked every one. Verdicts are now kept
// by schema: tools of one schema share a verdict (refused ones too), and
// a tool of another schema is judged by the registry.
func TestRegistryVerdictIsKeptBySchemaNotByTool(t *testing.T) {
	registryCheck.Lock()
	registryCheck.verdicts = nil
	registryCheck.Unlock()
	bad := map[string]any{"type": "string"}
	in := Inventory{Backend: "a", Tools: []*mcp.Tool{
		{Name: "ok1"}, {Name: "ok2", InputSchema: map[string]any{"type": "object"}},
		{Name: "bad1", InputSchema: bad}, {Name: "bad2", InputSchema: bad},
		{Name: "out", InputSchema: map[string]any{"type": "object"}, OutputSchema: map[string]any{"type": "object"}},
	}}
	out, refused := refuseInvalid(in)
	require.Len(t, out.Tools, 3)
	require.Len(t, refused, 2)
	assert.Equal(t, refused[0].Reason, refused[1].Reason, "one verdict for one schema")
	registryCheck.Lock()
	n := len(registryCheck.verdicts)
	registryCheck.Unlock()
	assert.Equal(t, 3, n, "verdicts: object (ok1 with the default, ok2), string, object with an output schema")
	_, again := refuseInvalid(Inventory{Backend: "b", Tools: []*mcp.Tool{{Name: "bad3", InputSchema: bad}}})
	require.Len(t, again, 1, "a kept refusal still refuses")
}
