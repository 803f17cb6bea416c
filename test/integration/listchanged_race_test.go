package integration

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestListChangedToldTwiceWhenARefreshRacedTheChange: a change made right
// after vmcp's stream on the backend opened (its GET stream, or its
// list_changed listen, which may reopen at once) raced the refresh that
// opening requested: that refresh told clients of the change by its
// difference, and the backend's announcement, arriving during or just
// after it, forced the same tools/list_changed again (1 in 2 to 8 runs on
// Stateless). An announcement a refresh already covered is no longer
// forced: exactly one per change, with its subscription id, and a go-sdk
// Modern client (whose own listen vmcp honors) told once and then seeing
// the tool (this test replaces TestModernListenToolListChanged, which made
// the change later and flaked on the same race).
func TestListChangedToldTwiceWhenARefreshRacedTheChange(t *testing.T) {
	for _, mode := range eras {
		t.Run(mode.String(), func(t *testing.T) {
			srv, url, ready := startRefreshedBackend(t, mode)
			v := harness.StartVMCP(t, nil, config.Backend{Name: "be", URL: url, Transport: config.TransportStreamableHTTP})
			ls := openListenStream(t, v, `"L1"`, map[string]any{"toolsListChanged": true, "promptsListChanged": true})
			require.Equal(t, map[string]any{"toolsListChanged": true}, ls.ack, "the backend has no prompts: only tools is honored")

			changed := make(chan struct{}, 8)
			cs := v.Connect(t, "", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
				ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
			require.Equal(t, []string{"be_echo"}, harness.ToolNames(t, cs))
			require.Eventually(t, func() bool { return v.Server.ModernListens() == 2 }, stateWait, 5*time.Millisecond,
				"the client's own listen is open")
			if mode == harness.Stateful { // else the go-sdk drops a list_changed sent before vmcp's GET stream is connected
				harness.AwaitGETStreams(t, srv, stateWait)
			}
			select {
			case <-ready:
			case <-time.After(stateWait):
				t.Fatal("vmcp's stream on the backend did not open")
			}
			harness.AddEcho(srv, "added")
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

// startRefreshedBackend serves a backend with tool "echo" in mode; ready
// gets a value once a change the backend makes is heard exactly once:
// Stateful, once vmcp listed it after its GET stream arrived (the
// stream's opening refreshes the catalogue: a change made while that
// listing ran was told by its difference and again by the backend's
// announcement, 10 in 120 runs under load); Stateless, once vmcp's
// list_changed listen is acknowledged (a change before it reached no
// stream).
func startRefreshedBackend(t *testing.T, mode harness.Mode) (*mcp.Server, string, <-chan struct{}) {
	t.Helper()
	var opened atomic.Bool
	ready := make(chan struct{}, 1)
	signal := func() {
		select {
		case ready <- struct{}{}:
		default:
		}
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "be", Version: "test"}, nil)
	harness.AddEcho(srv, "echo")
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			after := opened.Load() // received after the GET stream arrived
			res, err := next(ctx, method, req)
			if method == "tools/list" && after && mode == harness.Stateful {
				signal()
			}
			return res, err
		}
	})
	srv.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "notifications/subscriptions/acknowledged" && mode != harness.Stateful {
				signal()
			}
			return res, err
		}
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: mode != harness.Stateful})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			opened.Store(true)
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return srv, hs.URL, ready
}
