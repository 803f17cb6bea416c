package integration

import (
	"context"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// Regression: parked MRTR calls had no bound but their timeout: 2,000
// unanswered calls held 22,000 goroutines, 4,000 backend sockets and
// 350 MB for five minutes. Beyond mrtr.max_parked a call is refused
// naming the limit, and a slot is free again once a parked call ends.
func TestParkedCallsWereUnbounded(t *testing.T) {
	legacyBE := harness.StartBackend(t, "lb", harness.Stateful, func(s *mcp.Server) {
		harness.AddEcho(s, "echo")
		s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			er, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: nameSchema})
			if err != nil {
				return nil, err
			}
			return textResultOf(fmt.Sprint(er.Content["v"])), nil
		})
	})
	v := harness.StartVMCP(t, func(c *config.Config) { c.MRTR.MaxParked = 2 }, legacyBE.Config())
	asking := map[string]any{"name": "lb_ask",
		"_meta": map[string]any{mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}, "sampling": map[string]any{}}}}
	var first map[string]any
	for i := range 2 {
		st, msg := modernRPC(t, v, `1`, "tools/call", "lb_ask", asking)
		require.Equal(t, http.StatusOK, st, "call %d: %v", i, msg)
		if first == nil {
			first = msg["result"].(map[string]any)
		}
	}
	require.Equal(t, 2, v.Server.ParkedCalls())
	st, msg := modernRPC(t, v, `3`, "tools/call", "lb_ask", asking)
	require.Equal(t, http.StatusOK, st, "%v", msg)
	require.Contains(t, msg["error"].(map[string]any)["message"], "mrtr.max_parked is 2")
	require.Equal(t, 2, v.Server.ParkedCalls(), "the refused call parked nothing")
	st, msg = modernRPC(t, v, `6`, "tools/call", "lb_echo", map[string]any{"name": "lb_echo", "arguments": map[string]any{"text": "hi"}})
	require.Equal(t, http.StatusOK, st, "%v", msg)
	require.Nil(t, msg["error"], "a call whose client cannot be asked never parks, so the limit does not apply: %v", msg)

	answers := map[string]any{}
	for id := range first["inputRequests"].(map[string]any) {
		answers[id] = map[string]any{"action": "accept", "content": map[string]any{"v": "ada"}}
	}
	st, msg = modernRPC(t, v, `5`, "tools/call", "lb_ask", map[string]any{"name": "lb_ask",
		"requestState": first["requestState"], "inputResponses": answers})
	require.Equal(t, http.StatusOK, st, "%v", msg)
	require.Equal(t, "complete", msg["result"].(map[string]any)["resultType"], "%v", msg)
	require.Eventually(t, func() bool { return v.Server.ParkedCalls() == 1 }, stateWait, 5*time.Millisecond, "the answered call left")
	st, msg = modernRPC(t, v, `4`, "tools/call", "lb_ask", asking)
	require.Equal(t, http.StatusOK, st, "%v", msg)
	require.Equal(t, "input_required", msg["result"].(map[string]any)["resultType"], "a slot was free again")
}
