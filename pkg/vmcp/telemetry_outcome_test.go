package vmcp_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// blockingServer has tool block, which reports its start on started and
// returns only when its call is cancelled or release is closed.
func blockingServer(name string, started chan<- struct{}, release <-chan struct{}) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "test"}, nil)
	srv.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-release:
			return nil, errors.New("released")
		}
	})
	return srv
}

// blockingBackends are a Legacy streamable HTTP backend "relayed" (a
// Legacy client's calls are relayed), a Legacy SSE backend "sdk" (the
// go-sdk path) and a stateless backend "modern" (Modern clients' calls go
// direct or shared), each serving blockingServer's block.
func blockingBackends(t *testing.T, started chan<- struct{}) []config.Backend {
	release := make(chan struct{})
	rsrv := blockingServer("relayed", started, release)
	stateful := serveTraced(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return rsrv }, nil))
	ssrv := blockingServer("sdk", started, release)
	sse := serveTraced(t, mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return ssrv }, nil))
	msrv := blockingServer("modern", started, release)
	modern := serveTraced(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return msrv }, &mcp.StreamableHTTPOptions{Stateless: true}))
	t.Cleanup(func() { close(release) }) // before the backends close (cleanups run last first)
	return []config.Backend{
		{Name: "relayed", URL: stateful.URL, Transport: config.TransportStreamableHTTP},
		{Name: "sdk", URL: sse.URL, Transport: config.TransportSSE},
		{Name: "modern", URL: modern.URL, Transport: config.TransportStreamableHTTP},
	}
}

// cancelBlock calls tool on cs and cancels the call once the backend runs
// it (a Legacy client sends notifications/cancelled; a Modern one closes
// its request).
func cancelBlock(t *testing.T, cs *mcp.ClientSession, tool string, started <-chan struct{}) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-started:
		case <-time.After(20 * time.Second):
		}
		cancel()
	}()
	_, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
	require.ErrorIs(t, err, context.Canceled, "%s", tool)
}

// The notifications a 2025-11-25 go-sdk client sends were answered 202
// before vmcp learnt their method (the go-sdk handles them after the
// answer; the relay answers a relayed call's cancellation itself), so
// vmcp_requests_total counted them as method "POST".
func TestLegacyNotificationsCountedAsPOST(t *testing.T) {
	started := make(chan struct{}, 4)
	v := harness.StartVMCP(t, nil, blockingBackends(t, started)...)
	client := mcp.NewClient(&mcp.Implementation{Name: "roots-client", Version: "test"},
		&mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}})
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: v.URL}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })

	client.AddRoots(&mcp.Root{URI: "file:///work"}) // notifications/roots/list_changed
	cancelBlock(t, cs, "relayed_block", started)    // notifications/cancelled of a relayed call
	cancelBlock(t, cs, "sdk_block", started)        // notifications/cancelled of a go-sdk-path call

	m := v.Server.Metrics()
	count := func(label string) float64 {
		return testutil.ToFloat64(m.Requests.WithLabelValues(label, "legacy", "ok"))
	}
	require.EventuallyWithT(t, func(e *assert.CollectT) {
		for label, n := range map[string]float64{"notifications/initialized": 1, "notifications/roots/list_changed": 1, "notifications/cancelled": 2, "POST": 0} {
			assert.Equal(e, n, count(label), label)
		}
	}, 10*time.Second, 10*time.Millisecond, "each notification counted under its method")
}

// A call its client cancelled was counted as a backend failure: on the
// go-sdk path and on the Modern paths vmcp_backend_requests_total had
// outcome "error" and vmcp_backend_errors_total counted it, while the relay
// counted a notifications/cancelled as "ok". Every path counts it as
// "cancelled", no backend error, and the client request as "cancelled" too.
func TestClientCancelledCallCountedAsBackendError(t *testing.T) {
	started := make(chan struct{}, 4)
	v := harness.StartVMCP(t, nil, blockingBackends(t, started)...)
	legacy := v.Connect(t, "2025-11-25", nil)
	cancelBlock(t, legacy, "relayed_block", started) // relay
	cancelBlock(t, legacy, "sdk_block", started)     // go-sdk path
	modern := v.Connect(t, "", nil)
	require.Empty(t, modern.ID(), "a Modern client")
	cancelBlock(t, modern, "modern_block", started)  // direct
	cancelBlock(t, modern, "sdk_block", started)     // shared
	cancelBlock(t, modern, "relayed_block", started) // parked

	m := v.Server.Metrics()
	calls := []struct{ backend, revision string }{{"relayed", "legacy"}, {"sdk", "legacy"}, {"modern", "modern"}, {"sdk", "modern"}, {"relayed", "modern"}}
	require.EventuallyWithT(t, func(e *assert.CollectT) {
		for _, c := range calls {
			for _, outcome := range []string{"cancelled", "ok", "error"} {
				want := map[bool]float64{true: 1}[outcome == "cancelled"]
				assert.Equal(e, want, testutil.ToFloat64(m.BackendRequests.WithLabelValues(c.backend, "tools/call", c.revision, outcome)), "%v %s", c, outcome)
			}
		}
	}, 10*time.Second, 10*time.Millisecond, "every cancelled call counted once, as cancelled")
	for _, c := range calls {
		require.Zero(t, testutil.ToFloat64(m.BackendErrors.WithLabelValues(c.backend, "tools/call", c.revision)), "%v: no backend error", c)
	}
	client := func(revision, outcome string) float64 {
		return testutil.ToFloat64(m.Requests.WithLabelValues("tools/call", revision, outcome))
	}
	require.EventuallyWithT(t, func(e *assert.CollectT) {
		for revision, n := range map[string]float64{"legacy": 2, "modern": 3} {
			assert.Equal(e, n, client(revision, "cancelled"), revision)
			assert.Zero(e, client(revision, "ok"), revision)
			assert.Zero(e, client(revision, "error"), revision)
		}
	}, 10*time.Second, 10*time.Millisecond, "client requests counted as cancelled")
}
