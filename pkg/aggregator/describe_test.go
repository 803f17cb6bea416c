package aggregator

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
)

// TestBackendDescriptionChangeWasKeptOut: an inventory's description
// reaches the catalogue (tool search indexes it), and a change of the
// description alone swaps in a new catalogue, though no list changed (no
// listener called: clients are not told to list again).
func TestBackendDescriptionChangeWasKeptOut(t *testing.T) {
	t.Parallel()
	a, changes, _ := newRecorded(t, Policy{Order: []string{"a", "b"}})
	tools := []*mcp.Tool{{Name: "x", InputSchema: map[string]any{"type": "object"}}}
	a.Update(Inventory{Backend: "a", Tools: tools, Description: "Kubernetes clusters."})
	a.Update(Inventory{Backend: "b", Tools: tools})
	assert.Equal(t, "Kubernetes clusters.", a.Current().BackendDescription("a"))
	assert.Empty(t, a.Current().BackendDescription("b"))
	assert.Empty(t, a.Current().BackendDescription("c"))
	n, v := len(*changes), a.Version()
	a.Update(Inventory{Backend: "a", Tools: tools, Description: "Recipes."})
	assert.Equal(t, "Recipes.", a.Current().BackendDescription("a"))
	assert.Equal(t, v+1, a.Version())
	assert.Len(t, *changes, n, "a description change called the listeners")
	a.Update(Inventory{Backend: "a", Tools: tools, Description: "Recipes."})
	assert.Equal(t, v+1, a.Version(), "the same inventory again made a new catalogue")
}
