package integration

// The Legacy relay (pkg/dispatch/legacy/relay.go): which calls it takes,
// a backend that forgot the session, and the idle timeout vmcp keeps now
// that relayed requests bypass the go-sdk handler.

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// relayed is v's vmcp_relayed_requests_total{method} (each server has its
// own registry, so counts are this test's).
func relayed(v *harness.VMCP, method string) float64 {
	var m dto.Metric
	_ = v.Server.Metrics().Relayed.WithLabelValues(method).Write(&m)
	return m.GetCounter().GetValue()
}

// addRelayedMethods gives a backend one of each method the relay takes:
// tool echo, resource test://doc ("doc body") and prompt greet ("hello").
func addRelayedMethods(s *mcp.Server, backend string) {
	echoTool(s, backend, "echo")
	s.AddResource(&mcp.Resource{URI: "test://doc", Name: "doc"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
		return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "test://doc", Text: "doc body"}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "greet"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
	})
}

// Without the relay every Legacy call would go through the go-sdk server
// and client (~9 decodes, ~340 KB per call); stdio backends are relayed
// too, Core.Do writing on their go-sdk connection.
func TestLegacyCallsAreRelayedOnEveryTransport(t *testing.T) {
	b := harness.StartBackend(t, "web", harness.Stateful, func(s *mcp.Server) { addRelayedMethods(s, "web") })
	v := harness.StartVMCP(t, nil, b.Config(), harness.StdioBackend(t, "local"))
	awaitTools(t, v, "web_echo", "local_echo")
	cs := v.Connect(t, legacy, nil)

	calls, reads, gets := relayed(v, "tools/call"), relayed(v, "resources/read"), relayed(v, "prompts/get")
	require.Equal(t, "web/echo:hi", callText(t, cs, "web_echo", "hi"))
	rr, err := cs.ReadResource(ctx(t), &mcp.ReadResourceParams{URI: "test://doc"})
	require.NoError(t, err)
	require.Equal(t, "doc body", rr.Contents[0].Text)
	gp, err := cs.GetPrompt(ctx(t), &mcp.GetPromptParams{Name: "web_greet"})
	require.NoError(t, err)
	require.Equal(t, "hello", gp.Messages[0].Content.(*mcp.TextContent).Text)
	require.Equal(t, calls+1, relayed(v, "tools/call"), "tools/call to an HTTP backend is relayed")
	require.Equal(t, reads+1, relayed(v, "resources/read"), "resources/read is relayed")
	require.Equal(t, gets+1, relayed(v, "prompts/get"), "prompts/get is relayed")

	require.Equal(t, "hi", callText(t, cs, "local_echo", "hi"))
	require.Equal(t, calls+2, relayed(v, "tools/call"), "a stdio backend's call is relayed too (Core.Do on its connection)")
}

// forgetful wraps a backend handler: once armed, the next tools/call POST
// on the session that carried the previous tools/call gets 404, as from a
// backend that restarted and lost its sessions.
type forgetful struct {
	next     http.Handler
	mu       sync.Mutex
	last     string // backend session id of the last tools/call
	forget   string // session id to answer 404 for, once
	refused  atomic.Int32
	sessions atomic.Int32 // initialize requests seen
}

func (f *forgetful) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	if r.Method == http.MethodPost && id == "" {
		f.sessions.Add(1)
	}
	if r.Method == http.MethodPost && id != "" && isToolsCall(r) {
		f.mu.Lock()
		hit := id == f.forget
		if hit {
			f.forget = ""
		}
		f.last = id
		f.mu.Unlock()
		if hit {
			f.refused.Add(1)
			http.Error(w, "session not found", http.StatusNotFound)
			return
		}
	}
	f.next.ServeHTTP(w, r)
}

// isToolsCall peeks at a POST body (and puts it back).
func isToolsCall(r *http.Request) bool {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return bytes.Contains(body, []byte(`"tools/call"`))
}

func (f *forgetful) arm() {
	f.mu.Lock()
	f.forget = f.last
	f.mu.Unlock()
}

// A relayed call answered 404 was never processed: it must reach the
// backend on a new session instead of failing the client's call.
func TestRelayedCallToBackendThatForgotTheSessionSucceedsOnANewSession(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "fg", Version: "test"}, nil)
	echoTool(srv, "fg", "echo")
	f := &forgetful{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
	hs := httptest.NewServer(f)
	t.Cleanup(hs.Close)
	v := harness.StartVMCP(t, nil, config.Backend{Name: "fg", URL: hs.URL, Transport: config.TransportStreamableHTTP})
	awaitTools(t, v, "fg_echo")
	cs := v.Connect(t, legacy, nil)
	require.Equal(t, "fg/echo:one", callText(t, cs, "fg_echo", "one"))
	before := f.sessions.Load()
	f.arm()
	require.Equal(t, "fg/echo:two", callText(t, cs, "fg_echo", "two"))
	require.Equal(t, int32(1), f.refused.Load(), "the backend refused the old session once")
	require.Greater(t, f.sessions.Load(), before, "vmcp opened a new backend session")
	require.Equal(t, "fg/echo:three", callText(t, cs, "fg_echo", "three"))
}

// vmcp owns the idle timeout (the go-sdk handler never sees relayed
// requests): an idle session ends, a session with a relayed call in flight
// longer than the timeout does not.
func TestIdleTimeoutEndsIdleSessionsButNotOneWithARelayedCallInFlight(t *testing.T) {
	const idle = 300 * time.Millisecond
	started, release := make(chan struct{}, 1), make(chan struct{})
	b := harness.StartBackend(t, "slow", harness.Stateful, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "wait", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			select {
			case <-release:
			case <-ctx.Done():
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	})
	v := harness.StartVMCP(t, func(c *config.Config) { c.Sessions.IdleTimeout = config.Duration(idle) }, b.Config())
	awaitTools(t, v, "slow_wait")
	require.Eventually(t, func() bool { return v.Server.SessionCount() == 0 }, stateWait, 5*time.Millisecond)

	busy := v.Connect(t, legacy, nil)
	errc := make(chan error, 1)
	go func() {
		_, err := busy.CallTool(ctx(t), &mcp.CallToolParams{Name: "slow_wait", Arguments: map[string]any{}})
		errc <- err
	}()
	<-started
	_ = v.Connect(t, legacy, nil) // idle from the start
	require.Eventually(t, func() bool { return v.Server.SessionCount() == 1 }, stateWait, 5*time.Millisecond,
		"the idle session ended; the busy one lives")
	select {
	case err := <-errc:
		t.Fatalf("the call in flight ended early: %v", err)
	case <-time.After(3 * idle): // a call several idle timeouts long
	}
	require.Equal(t, 1, v.Server.SessionCount(), "the busy session outlived its idle timeout")
	close(release)
	require.NoError(t, <-errc)
	require.Eventually(t, func() bool { return v.Server.SessionCount() == 0 }, stateWait, 5*time.Millisecond,
		"idle again after the call, the session ends")
}
