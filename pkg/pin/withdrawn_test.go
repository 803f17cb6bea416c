package pin

import (
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vmcp/vmcp/pkg/config"
)

// A backend that withdraws a tool with a pending change: the change stayed
// on /status for good, and a backend renaming its tools on every listing
// grew this node's state without bound. What a listing no longer offers
// is forgotten here (its pin stays in the store: the tool coming back
// changed is still a change).
func TestWithdrawnToolStayedAPendingChange(t *testing.T) {
	t.Parallel()
	p := New(Options{Mode: config.ToolChangesDeny})
	defer p.Close()
	other := &mcp.Tool{Name: "other", InputSchema: map[string]any{"type": "object"}}
	p.Admit("b", []*mcp.Tool{tool("v1"), other})
	p.Admit("b", []*mcp.Tool{tool("v2"), other})
	require.Len(t, p.Changes(), 1)
	p.Admit("b", []*mcp.Tool{other})
	assert.Empty(t, p.Changes(), "the withdrawn tool's change")
	assert.Empty(t, names(p.Admit("b", []*mcp.Tool{tool("v2")})), "back, still changed: still withheld")
	assert.Len(t, p.Changes(), 1)

	for i := range 100 {
		p.Admit("b", []*mcp.Tool{{Name: fmt.Sprintf("t%d", i), InputSchema: map[string]any{"type": "object"}}})
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	assert.Len(t, p.state, 1, "the state of tools no longer offered")
}

// A backend listing one name twice with two definitions: the second was
// decided as a change on every listing (counted each time, its since
// reset). The first occurrence is decided once, the rest left out (the
// aggregator keeps the first too).
func TestToolListedTwiceCountedAsAChangeOnEveryListing(t *testing.T) {
	t.Parallel()
	c := newCounter()
	p := New(Options{Mode: config.ToolChangesDeny, Counter: c})
	defer p.Close()
	for range 3 {
		assert.Equal(t, []string{"echo:v1"}, names(p.Admit("b", []*mcp.Tool{tool("v1"), tool("v2")})))
	}
	assert.Zero(t, testutil.ToFloat64(c.WithLabelValues("b", OutcomeDenied)))
	assert.Empty(t, p.Changes())
	assert.Empty(t, names(p.Admit("b", []*mcp.Tool{tool("v3"), tool("v1")})), "a changed first occurrence is withheld, never replaced by a later one")
}

// An operator reviews a change on /status, and the backend redefines the
// tool again before the accept arrives: the accept took the newer
// definition, never reviewed. Naming the reviewed hash refuses it.
func TestAcceptTookADefinitionTheOperatorNeverSaw(t *testing.T) {
	t.Parallel()
	p := New(Options{Mode: config.ToolChangesDeny})
	defer p.Close()
	p.Admit("b", []*mcp.Tool{tool("v1")})
	p.Admit("b", []*mcp.Tool{tool("v2")})
	reviewed := p.Changes()[0].Offered
	p.Admit("b", []*mcp.Tool{tool("v3 exfiltrates")})
	require.ErrorIs(t, p.AcceptOffered("b", "echo", reviewed), ErrOtherOffered)
	assert.Empty(t, names(p.Admit("b", []*mcp.Tool{tool("v3 exfiltrates")})), "still withheld")
	require.NoError(t, p.AcceptOffered("b", "echo", Hash(tool("v3 exfiltrates"))))
	assert.Equal(t, []string{"echo:v3 exfiltrates"}, names(p.Admit("b", []*mcp.Tool{tool("v3 exfiltrates")})))
}
