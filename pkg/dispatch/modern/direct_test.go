package modern_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/vmcp/vmcp/pkg/config"
)

// tools/call to a Modern (stateless) backend goes out as one direct POST;
// these check what it must keep from the SDK client path: the backend's
// JSON-RPC errors (code, data, message naming the backend), MRTR results
// (the backend's requestState sealed in vmcp's) and retries (the backend
// gets its own state back), the backend's own result and _meta members, and
// forward_headers.
func TestDirectToolCall(t *testing.T) {
	seen := make(chan *mcp.CallToolRequest, 8)
	be := startBackend(t, "m", true, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "fail", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, &jsonrpc.Error{Code: 1234, Message: "nope", Data: []byte(`{"why":"test"}`)}
			})
		s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				seen <- req
				if req.Params.RequestState == "" {
					return &mcp.CallToolResult{
						InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object"}}},
						RequestState:  "st-1",
					}, nil
				}
				er, _ := req.Params.InputResponses["q"].(*mcp.ElicitResult)
				if er == nil || req.Params.RequestState != "st-1" {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad retry"}
				}
				res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "hi " + er.Content["name"].(string)}},
					StructuredContent: map[string]any{"n": 1}}
				res.Meta = mcp.Meta{"com.example/cost": 3}
				return res, nil
			})
	})
	be.ForwardHeaders = []string{"X-Trace"}
	url, _ := startVMCP(t, func(c *config.Config) { c.Aggregation.ConflictResolution = config.StrategyPriority }, be)

	t.Run("backend error keeps code and data, names the backend", func(t *testing.T) {
		st, r := rpc(t, url, `1`, "tools/call", map[string]any{"name": "fail"})
		jerr := requireError(t, st, r, http.StatusOK, 1234)
		assert.Equal(t, `backend "m": nope`, jerr.Message)
		assert.JSONEq(t, `{"why":"test"}`, string(jerr.Data))
	})

	t.Run("MRTR round trip", func(t *testing.T) {
		st, r := rpc(t, url, `"a"`, "tools/call", map[string]any{"name": "ask", "arguments": map[string]any{"k": "v"}})
		res := result(t, st, r)
		assert.Equal(t, "input_required", res["resultType"])
		state, _ := res["requestState"].(string)
		assert.NotEqual(t, "st-1", state, "vmcp seals the backend's requestState in its own")
		assert.Contains(t, res["inputRequests"], "q")
		first := <-seen
		assert.JSONEq(t, `{"k":"v"}`, string(first.Params.Arguments))

		hdr := modernHeaders("tools/call", "ask")
		hdr.Set("X-Trace", "t-9")
		resp, b := post(t, url, hdr, body(`"b"`, "tools/call", map[string]any{"name": "ask",
			"inputResponses": map[string]any{"q": map[string]any{"action": "accept", "content": map[string]any{"name": "ada"}}},
			"requestState":   state}))
		res = result(t, resp.StatusCode, decodeReply(t, b))
		retry := <-seen
		assert.JSONEq(t, `{}`, string(retry.Params.Arguments), "absent arguments are sent as {}")
		assert.Equal(t, "t-9", retry.Extra.Header.Get("X-Trace"), "forward_headers reach the backend")
		assert.Equal(t, "complete", res["resultType"])
		assert.Equal(t, map[string]any{"n": float64(1)}, res["structuredContent"])
		meta := res["_meta"].(map[string]any)
		assert.Equal(t, float64(3), meta["com.example/cost"], "the backend's own _meta keys are kept")
		assert.Equal(t, "vmcp", meta[mcp.MetaKeyServerInfo].(map[string]any)["name"], "serverInfo is vmcp's")
		assert.Equal(t, []any{map[string]any{"type": "text", "text": "hi ada"}}, res["content"])
	})
}
