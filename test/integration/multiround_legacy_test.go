package integration

import (
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// A multi-round (MRTR-style) tool on a Legacy HTTP backend, like the
// conformance everything-server's test_input_required_result_multi_round
// served at a Legacy revision: the go-sdk server's Legacy shim asks the
// first round itself and then returns the second round's inputRequests
// and requestState in a plain result. Through vmcp it completes from a
// Modern and a Legacy client.
// (Over HTTP a Legacy client's call is relayed, a Modern client's parked;
// over SSE both take the go-sdk path.)
func TestLegacyBackendMultiRoundToolCompletesForBothRevisions(t *testing.T) {
	be := harness.StartBackend(t, "lb", harness.Stateful, addWizard)
	v := harness.StartVMCP(t, nil, be.Config(), startSSEBackend(t, "sse", addWizard))
	awaitTools(t, v, "lb_wizard", "sse_wizard")
	for _, version := range []string{"", legacy} {
		t.Run("client "+map[string]string{"": "modern", legacy: "legacy"}[version], func(t *testing.T) {
			cs := connectAnswering(t, v, version)
			for _, tool := range []string{"lb_wizard", "sse_wizard"} {
				res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: tool})
				require.NoError(t, err, tool)
				require.Equal(t, "ada likes blue", harness.Text(t, res), tool)
			}
		})
	}
}

// Each round of a multi-round call to a Legacy backend carries its own
// requestState: the client never sees the same one twice.
func TestLegacyBackendMultiRoundRequestStateDiffersEachRound(t *testing.T) {
	be := harness.StartBackend(t, "lb", harness.Stateful, addWizard)
	v := harness.StartVMCP(t, nil, be.Config())
	meta := map[string]any{mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}}}
	params := map[string]any{"name": "lb_wizard", "_meta": meta}
	seen := map[string]bool{}
	answers := map[string]string{"name?": "ada", "color?": "blue"}
	for round := 1; ; round++ {
		require.LessOrEqual(t, round, 4, "the call ends within its rounds")
		st, msg := modernRPC(t, v, `1`, "tools/call", "lb_wizard", params)
		require.Equal(t, http.StatusOK, st, "%v", msg)
		res := msg["result"].(map[string]any)
		if res["resultType"] != "input_required" {
			require.Equal(t, "ada likes blue", res["content"].([]any)[0].(map[string]any)["text"], "%v", res)
			require.Len(t, seen, 2, "two rounds")
			return
		}
		state := res["requestState"].(string)
		require.False(t, seen[state], "round %d repeats a requestState", round)
		seen[state] = true
		responses := map[string]any{}
		for id, r := range res["inputRequests"].(map[string]any) {
			q := r.(map[string]any)["params"].(map[string]any)["message"].(string)
			responses[id] = map[string]any{"action": "accept", "content": map[string]any{"v": answers[q]}}
		}
		params = map[string]any{"name": "lb_wizard", "_meta": meta, "requestState": state, "inputResponses": responses}
	}
}
