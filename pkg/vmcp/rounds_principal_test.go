package vmcp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// Every round of a multi-round call to a Legacy backend (the go-sdk
// server's shim asks round 1, vmcp parks round 2) gets a requestState of
// its own, bound to the principal: another principal presenting the
// second round's state gets -32602; the owner completes.
func TestLegacyBackendSecondRoundRequestStateBoundToPrincipal(t *testing.T) {
	idp := authtest.Start(t, audience)
	be := harness.StartBackend(t, "lb", harness.Stateful, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "two", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ask := &mcp.ElicitParams{Message: "q?", RequestedSchema: map[string]any{"type": "object"}}
			switch req.Params.RequestState {
			case "":
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"a": ask}, RequestState: "r1"}, nil
			case "r1":
				return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"b": ask}, RequestState: "r2"}, nil
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	})
	v := harness.StartVMCP(t, func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: audience, RequiredScopes: []string{"mcp:tools"},
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
	}, be.Config())
	admin, user := principals(t, idp)
	round := func(token string, prev map[string]any) (int, map[string]any) {
		var extra map[string]any
		if prev != nil {
			in := map[string]any{}
			for id := range prev["inputRequests"].(map[string]any) {
				in[id] = map[string]any{"action": "accept", "content": map[string]any{}}
			}
			extra = map[string]any{"requestState": prev["requestState"], "inputResponses": in}
		}
		return modernCall(t, v.URL, token, "lb_two", extra)
	}
	status, msg := round(admin, nil)
	require.Equal(t, http.StatusOK, status, "%v", msg)
	first := msg["result"].(map[string]any)
	require.Equal(t, "input_required", first["resultType"], "%v", msg)
	status, msg = round(admin, first)
	require.Equal(t, http.StatusOK, status, "%v", msg)
	second := msg["result"].(map[string]any)
	require.Equal(t, "input_required", second["resultType"], "%v", msg)
	require.NotEqual(t, first["requestState"], second["requestState"], "each round's requestState differs")

	status, msg = round(user, second)
	require.Equal(t, http.StatusBadRequest, status, "%v", msg)
	e := msg["error"].(map[string]any)
	require.Equal(t, float64(jsonrpc.CodeInvalidParams), e["code"])
	require.Contains(t, e["message"], "another principal")

	status, msg = round(admin, second)
	require.Equal(t, http.StatusOK, status, "%v", msg)
	require.Equal(t, "done", msg["result"].(map[string]any)["content"].([]any)[0].(map[string]any)["text"], "%v", msg)
}
