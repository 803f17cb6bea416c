package integration

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/test/integration/harness"
	"github.com/vmcp/vmcp/test/integration/harness/servertools"
)

// TestLegacySetLevelAndRootsChangedWentUncounted pins what a Legacy
// client's backend sessions get outside its calls: logging/setLevel (when
// the session opens, and on every open session when the client changes
// its level) and notifications/roots/list_changed. They went out through
// the go-sdk client (and, over stdio, a marker root toggled in it), past
// pkg/upstream: vmcp_backend_requests_total never counted them. Through
// upstream (Core.Request, Core.Notify), on stdio and HTTP alike, each is
// counted once, and the backend gets it.
func TestLegacySetLevelAndRootsChangedWentUncounted(t *testing.T) {
	t.Parallel()
	h, levels, rootsChanged := sessionSendsBackend(t)
	for kind, b := range map[string]config.Backend{"stdio": harness.StdioBackend(t, "s"), "http": h.Config()} {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			v := harness.StartVMCP(t, nil, b)
			awaitTools(t, v, b.Name+"_report")
			caps := &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}
			client := mcp.NewClient(&mcp.Implementation{Name: "l", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
			cs, err := client.Connect(ctx(t), &mcp.StreamableClientTransport{Endpoint: v.URL}, &mcp.ClientSessionOptions{ProtocolVersion: legacy})
			require.NoError(t, err)
			t.Cleanup(func() { _ = cs.Close() })
			count := func(method string) float64 {
				return testutil.ToFloat64(v.Server.Metrics().BackendRequests.WithLabelValues(b.Name, method, upstream.RevisionLegacy, "ok"))
			}

			require.NoError(t, cs.SetLoggingLevel(ctx(t), &mcp.SetLoggingLevelParams{Level: "warning"}))
			require.Equal(t, "reported:", callText(t, cs, b.Name+"_report", ""), "the call that opens the backend session")
			require.Equal(t, 1.0, count("logging/setLevel"), "the level applied when the session opened")
			require.NoError(t, cs.SetLoggingLevel(ctx(t), &mcp.SetLoggingLevelParams{Level: "error"}))
			require.Equal(t, 2.0, count("logging/setLevel"), "the new level applied to the open session")

			client.AddRoots(&mcp.Root{URI: "file:///r"})
			require.Eventually(t, func() bool { return count("notifications/roots/list_changed") == 1 }, stateWait, 5*time.Millisecond,
				"notifications/roots/list_changed counted once")
			if kind == "http" {
				require.Equal(t, mcp.LoggingLevel("warning"), recvLevel(t, levels))
				require.Equal(t, mcp.LoggingLevel("error"), recvLevel(t, levels))
				select {
				case <-rootsChanged:
				case <-time.After(stateWait):
					t.Fatal("the backend never got notifications/roots/list_changed")
				}
				return
			}
			require.Eventually(t, func() bool { return callText(t, cs, "s_roots_changed", "") == "1" }, stateWait, 20*time.Millisecond,
				"the stdio backend was told once")
		})
	}
}

// sessionSendsBackend is a stateful HTTP backend serving servertools
// that reports each logging/setLevel and roots list_changed it gets.
func sessionSendsBackend(t *testing.T) (*harness.Backend, <-chan mcp.LoggingLevel, <-chan struct{}) {
	levels := make(chan mcp.LoggingLevel, 8)
	rootsChanged := make(chan struct{}, 8)
	h := harness.StartBackend(t, "h", harness.Stateful, func(s *mcp.Server) {
		servertools.Add(s)
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				switch p := req.GetParams().(type) {
				case *mcp.SetLoggingLevelParams:
					select { // never block the backend
					case levels <- p.Level:
					default:
					}
				case *mcp.RootsListChangedParams:
					select {
					case rootsChanged <- struct{}{}:
					default:
					}
				}
				return next(ctx, method, req)
			}
		})
	})
	return h, levels, rootsChanged
}

// recvLevel waits up to stateWait for a logging/setLevel the backend got
// other than "debug" (vmcp's control connection raises its own level to
// debug).
func recvLevel(t *testing.T, ch <-chan mcp.LoggingLevel) mcp.LoggingLevel {
	t.Helper()
	for {
		select {
		case l := <-ch:
			if l != "debug" {
				return l
			}
		case <-time.After(stateWait):
			t.Fatal("the backend never got logging/setLevel")
			return ""
		}
	}
}
