package integration

// notifications/roots/list_changed from a Legacy client reaches its own
// Legacy backend sessions (through upstream.Core.Notify: raw on streamable
// HTTP, a message on the connection over stdio), never another client's, and roots/list still
// returns the client's real roots. (2026-07-28 has no such notification:
// a Modern backend asks for roots per call.)

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

func TestRootsListChangedReachesOnlyTheClientsOwnBackendSessions(t *testing.T) {
	var mu sync.Mutex
	changed := map[string]int{} // backend session id -> notifications
	notified := make(chan string, 8)
	b := harness.StartBackend(t, "web", harness.Stateful, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "roots", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: req.Session.ID() + " " + strings.Join(uris, ",")}}}, nil
		})
	})
	// The handler is set after the server exists: the harness builds it.
	b.Server.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "notifications/roots/list_changed" {
				id := req.GetSession().ID()
				mu.Lock()
				changed[id]++
				mu.Unlock()
				notified <- id
			}
			return next(ctx, method, req)
		}
	})
	v := harness.StartVMCP(t, nil, b.Config(), harness.LegacyStdioBackend(t, "local"))
	awaitTools(t, v, "web_roots", "local_roots_changed")

	caps := &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}
	clientA := mcp.NewClient(&mcp.Implementation{Name: "A", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	clientA.AddRoots(&mcp.Root{URI: "file:///a1"})
	a, err := clientA.Connect(ctx(t), &mcp.StreamableClientTransport{Endpoint: v.URL}, &mcp.ClientSessionOptions{ProtocolVersion: legacy})
	require.NoError(t, err)
	t.Cleanup(func() { _ = a.Close() })
	bSession := v.Connect(t, legacy, &mcp.ClientOptions{Capabilities: caps})

	// Open every backend session: A's and B's on both backends.
	aWeb := strings.Fields(callText(t, a, "web_roots", ""))
	require.Equal(t, []string{"file:///a1"}, aWeb[1:])
	require.Equal(t, "0", callText(t, a, "local_roots_changed", ""))
	bWeb := strings.Fields(callText(t, bSession, "web_roots", ""))[0]
	require.Equal(t, "0", callText(t, bSession, "local_roots_changed", ""))

	clientA.AddRoots(&mcp.Root{URI: "file:///a2"})
	select {
	case id := <-notified:
		require.Equal(t, aWeb[0], id, "A's backend session was told, not B's")
	case <-time.After(stateWait):
		t.Fatal("the HTTP backend never got notifications/roots/list_changed")
	}
	require.Eventually(t, func() bool { return callText(t, a, "local_roots_changed", "") == "1" }, stateWait, 20*time.Millisecond,
		"the stdio backend of A was told once")
	require.Equal(t, "file:///a1,file:///a2", strings.Fields(callText(t, a, "web_roots", ""))[1], "roots/list is the client's own list")
	require.Equal(t, "file:///a1,file:///a2", callText(t, a, "local_roots", ""), "no marker root leaks to a stdio backend")

	require.Equal(t, "0", callText(t, bSession, "local_roots_changed", ""), "B's stdio backend was not told")
	mu.Lock()
	require.Zero(t, changed[bWeb], "B's HTTP backend session was not told")
	require.Equal(t, 1, changed[aWeb[0]])
	mu.Unlock()
}
