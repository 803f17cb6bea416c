package aggregator

import (
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// denyGate withholds the tools it names until allowed.
type denyGate struct {
	mu     sync.Mutex
	denied map[string]bool
}

func (g *denyGate) Admit(_ string, tools []*mcp.Tool) []*mcp.Tool {
	g.mu.Lock()
	defer g.mu.Unlock()
	var out []*mcp.Tool
	for _, t := range tools {
		if !g.denied[t.Name] {
			out = append(out, t)
		}
	}
	return out
}

func (g *denyGate) allow(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.denied, name)
}

func gateTool(name string) *mcp.Tool {
	return &mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}
}

// A tool the gate withholds is neither listed nor routed, in the shared
// catalogue and in a principal's own; Regate lists it once the gate admits
// it, telling listeners once.
func TestGateWithholdsAToolUntilRegateAdmitsIt(t *testing.T) {
	a := New(Policy{Strategy: "prefix", PrefixFormat: "{backend}_{name}"}, nil)
	g := &denyGate{denied: map[string]bool{"b": true}}
	a.SetGate(g)
	changes := 0
	a.OnChange(func(_, _ *Catalogue, _ []Kind) { changes++ })
	a.Update(Inventory{Backend: "x", Tools: []*mcp.Tool{gateTool("a"), gateTool("b")}})
	a.UpdateFor("alice", Inventory{Backend: "p", Tools: []*mcp.Tool{gateTool("b")}})
	_, _, ok := a.Current().Tool("x_b")
	require.False(t, ok, "withheld: not routed")
	require.Len(t, a.Current().Tools, 1)
	_, _, ok = a.For("alice").Tool("p_b")
	require.False(t, ok, "withheld from the principal's own catalogue too")

	g.allow("b")
	a.Regate()
	_, _, ok = a.Current().Tool("x_b")
	assert.True(t, ok)
	_, _, ok = a.For("alice").Tool("p_b")
	assert.True(t, ok)
	assert.Equal(t, 2, changes, "the first listing and the regate")
}
