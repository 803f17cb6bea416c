package vmcp_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// serveForShutdown runs vmcp.Serve over one backend whose "block" tool waits
// for its context and whose "slow" tool waits for release.
func serveForShutdown(t *testing.T, mode harness.Mode, release <-chan struct{}, started chan<- struct{}) (url string, stop context.CancelFunc, served <-chan struct{}, blocked <-chan struct{}) {
	unblocked := make(chan struct{}, 8)
	b := harness.StartBackend(t, "alpha", mode, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			<-ctx.Done()
			unblocked <- struct{}{}
			return nil, ctx.Err()
		})
		s.AddTool(&mcp.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			<-release
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	})
	cfg := &config.Config{Backends: []config.Backend{b.Config()}}
	cfg.ApplyDefaults()
	cfg.Aggregation.ConflictResolution = config.StrategyPriority
	cfg.Backends[0].Timeout = config.Duration(time.Minute)
	srv, err := vmcp.New(cfg, vmcp.Options{})
	require.NoError(t, err)
	rctx, rcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer rcancel()
	require.NoError(t, srv.WaitReady(rctx))
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx, lis, 500*time.Millisecond); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return "http://" + lis.Addr().String() + cfg.Path, cancel, done, unblocked
}

func TestShutdownGraceCutsCallsStillRunning(t *testing.T) {
	started := make(chan struct{}, 1)
	url, stop, served, unblocked := serveForShutdown(t, harness.Stateful, nil, started)
	c := mcp.NewClient(&mcp.Implementation{Name: "t"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url, MaxRetries: -1}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	called := make(chan error, 1)
	go func() { _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "block"}); called <- err }()
	<-started
	stop()
	select {
	case <-unblocked: // the backend call was cancelled by the grace cut
	case <-time.After(20 * time.Second):
		t.Fatal("backend call still running long after the shutdown grace")
	}
	select {
	case <-served:
	case <-time.After(20 * time.Second):
		t.Fatal("Serve did not return after the shutdown grace")
	}
	<-called
}

func TestShutdownLetsModernCallsWithRootsFinish(t *testing.T) {
	release := make(chan struct{})
	started := make(chan struct{}, 1)
	url, stop, served, _ := serveForShutdown(t, harness.Stateful, release, started)
	c := mcp.NewClient(&mcp.Implementation{Name: "t"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}}})
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url}, nil)
	require.NoError(t, err)
	type out struct {
		res *mcp.CallToolResult
		err error
	}
	called := make(chan out, 1)
	go func() {
		r, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "slow"})
		called <- out{r, err}
	}()
	<-started
	stop()
	// Shutdown has begun once the listener refuses new connections; the call
	// in flight must still complete when the backend answers.
	addr := strings.TrimPrefix(strings.TrimSuffix(url, "/mcp"), "http://")
	require.Eventually(t, func() bool {
		c, err := net.Dial("tcp", addr)
		if err == nil {
			c.Close()
		}
		return err != nil
	}, 10*time.Second, 5*time.Millisecond)
	close(release)
	o := <-called
	require.NoError(t, o.err, "a call in flight must finish within the grace period")
	require.Equal(t, "done", o.res.Content[0].(*mcp.TextContent).Text)
	<-served
}
