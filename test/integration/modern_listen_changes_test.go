package integration

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// A backend adds a tool: a raw listener gets exactly one
// tools/list_changed carrying its subscription id, and a go-sdk Modern
// client (whose own listen vmcp now honors) is told once and then sees the
// tool.
func TestModernListenToolListChanged(t *testing.T) {
	for _, mode := range eras {
		t.Run(mode.String(), func(t *testing.T) {
			listed := make(chan struct{}, 2) // the backend's first two answered tools/list
			be := harness.StartBackend(t, "be", mode, func(s *mcp.Server) {
				harness.AddEcho(s, "echo")
				s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
					return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
						res, err := next(ctx, method, req)
						if method == "tools/list" {
							select {
							case listed <- struct{}{}:
							default:
							}
						}
						return res, err
					}
				})
			})
			v := harness.StartVMCP(t, nil, be.Config())
			ls := openListenStream(t, v, `"L1"`, map[string]any{"toolsListChanged": true, "promptsListChanged": true})
			require.Equal(t, map[string]any{"toolsListChanged": true}, ls.ack, "the backend has no prompts: only tools is honored")

			changed := make(chan struct{}, 8)
			cs := v.Connect(t, "", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
			require.Equal(t, []string{"be_echo"}, harness.ToolNames(t, cs))
			require.Eventually(t, func() bool { return v.Server.ModernListens() == 2 }, stateWait, 5*time.Millisecond,
				"the client's own listen is open")

			be.AwaitGETStreams(t, stateWait) // else the go-sdk drops a list_changed sent before vmcp's GET stream is connected
			if mode == harness.Stateful {
				// The GET stream's opening refreshes the catalogue; a change
				// made while that listing ran was told by its difference and
				// again by the backend's announcement (10 in 120 runs under
				// load). The first listing and the opening's are answered
				// before the change.
				for range 2 {
					select {
					case <-listed:
					case <-time.After(stateWait):
						t.Fatal("vmcp did not list the backend twice (connect, GET stream opening)")
					}
				}
			}
			harness.AddEcho(be.Server, "added")
			m := ls.next(t)
			require.Equal(t, "notifications/tools/list_changed", m["method"])
			requireSubscriptionID(t, m["params"].(map[string]any), `"L1"`)
			select {
			case <-changed:
			case <-time.After(stateWait):
				t.Fatal("the go-sdk client got no tools/list_changed")
			}
			require.Equal(t, []string{"be_added", "be_echo"}, harness.ToolNames(t, cs))
			ls.quiet(t, 500*time.Millisecond)
			require.Empty(t, changed, "exactly one tools/list_changed per change")
		})
	}
}
