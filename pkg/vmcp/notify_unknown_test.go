package vmcp_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// A Legacy notification of a method vmcp does not handle got 400 + -32600
// (the go-sdk handler's refusal): JSON-RPC never answers a notification,
// and Streamable HTTP accepts one with 202 and no body. It is dropped; the
// session serves on.
func TestLegacyUnknownNotificationGot400(t *testing.T) {
	v := echoVMCP(t)
	session := map[string]string{"Mcp-Session-Id": legacySession(t, v.URL), "Mcp-Protocol-Version": "2025-11-25"}
	for _, body := range []string{`{"jsonrpc":"2.0","method":"notifications/foo"}`, `{"jsonrpc":"2.0","method":"foo/bar","params":{"x":1}}`} {
		a := send(t, http.MethodPost, v.URL, body, session)
		require.Equal(t, http.StatusAccepted, a.status, "%s: %s", body, a.body)
		require.Empty(t, a.body, body)
	}
	a := send(t, http.MethodPost, v.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"text":"after"}}}`, session)
	require.Equal(t, http.StatusOK, a.status, a.body)
	require.Contains(t, a.body, "after", "the session serves on")

	a = send(t, http.MethodPost, v.URL, `{"jsonrpc":"2.0","method":"notifications/foo"}`, nil)
	requireRPCError(t, a, -32600, "null", "without a session it is still refused")
}

// A go-sdk client that sends a notification vmcp does not handle (here its
// progress notification renamed by sending middleware) got an error from
// the send; now it is accepted and the session serves on.
func TestLegacyUnknownNotificationFailedGoSDKClientSend(t *testing.T) {
	v := echoVMCP(t)
	client := mcp.NewClient(&mcp.Implementation{Name: "notifier", Version: "test"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	require.NoError(t, mcp.AddSendingCustomMethod[*mcp.ProgressNotificationParams, *mcp.CallToolResult](client, "notifications/foo"))
	client.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/progress" {
				method = "notifications/foo"
			}
			return next(ctx, method, req)
		}
	})
	cs, err := client.Connect(t.Context(), &mcp.StreamableClientTransport{Endpoint: v.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	require.NoError(t, cs.NotifyProgress(t.Context(), &mcp.ProgressNotificationParams{ProgressToken: "t", Progress: 1}))
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "alpha_echo", Arguments: map[string]any{"text": "after"}})
	require.NoError(t, err)
	require.Contains(t, res.Content[0].(*mcp.TextContent).Text, "after")
}
