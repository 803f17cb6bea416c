package integration

import (
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// rawCall posts a tools/call of lb_two with progress token tok, state and
// answers to every input request of prev; it returns the status and the
// messages of the reply (SSE or JSON).
func rawCall(t *testing.T, v *harness.VMCP, tok string, prev map[string]any) (int, []map[string]any) {
	meta := map[string]any{"progressToken": tok, mcp.MetaKeyLogLevel: "debug",
		mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}}}
	params := map[string]any{"name": "lb_two", "_meta": meta}
	if prev != nil {
		answers := map[string]any{}
		for id := range prev["inputRequests"].(map[string]any) {
			answers[id] = map[string]any{"action": "accept", "content": map[string]any{"v": tok}}
		}
		params["requestState"], params["inputResponses"] = prev["requestState"], answers
	}
	resp := modernPost(t, ctx(t), v, `1`, "tools/call", "lb_two", params)
	defer resp.Body.Close()
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp.StatusCode, sseMessages(t, resp)
	}
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(b, &m), "%s", b)
	return resp.StatusCode, []map[string]any{m}
}

// TestParkedRetryAnsweredARemovedBackend pins a retry of a parked call
// whose backend was removed between rounds (a reload): it fails, and the
// backend never gets its answer, which it could act on (it got it, then
// the call was cancelled and the client told -32603 unknown backend).
func TestParkedRetryAnsweredARemovedBackend(t *testing.T) {
	var answered atomic.Int32
	cancelled := make(chan struct{})
	be := harness.StartBackend(t, "lb", harness.Stateful, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "two", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			defer close(cancelled)
			if _, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "delete?", RequestedSchema: nameSchema}); err != nil {
				return nil, err
			}
			answered.Add(1)
			<-ctx.Done()
			return nil, ctx.Err()
		})
	})
	other := harness.StartBackend(t, "ob", harness.Stateful, func(*mcp.Server) {})
	v := harness.StartVMCP(t, func(c *config.Config) { c.MRTR.ParkTimeout = config.Duration(time.Minute) }, be.Config(), other.Config())
	awaitTools(t, v, "lb_two")
	_, msgs := rawCall(t, v, "t0", nil)
	r1 := msgs[len(msgs)-1]["result"].(map[string]any)
	require.Equal(t, "input_required", r1["resultType"])
	cfg := *v.Config
	cfg.Backends = []config.Backend{other.Config()}
	require.Equal(t, []string{"lb"}, v.Server.Reload(&cfg, "test").Removed)

	_, msgs = rawCall(t, v, "t1", r1)
	require.Len(t, msgs, 1, "%v", msgs)
	require.NotNil(t, msgs[0]["error"], "%v", msgs)
	select {
	case <-cancelled:
	case <-time.After(stateWait):
		t.Fatal("the backend's call was not cancelled")
	}
	assert.Zero(t, answered.Load(), "the backend got the answer of a retry vmcp failed")
	require.Eventually(t, func() bool { return v.Server.ParkedCalls() == 0 }, stateWait, 5*time.Millisecond, "the call is still parked")
}

// TestParkedSessionLateLogReachedTheNextCall pins a log the backend sends
// on a pooled parked session after its call ended (not on a request of
// the call: on the session's GET stream): it reached the next call on the
// session, another client request; it is now dropped and counted.
func TestParkedSessionLateLogReachedTheNextCall(t *testing.T) {
	var first atomic.Pointer[mcp.ServerSession]
	var miss atomic.Pointer[prometheus.Counter]
	reused := make(chan bool, 1)
	be := harness.StartBackend(t, "lb", harness.Stateful, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "a", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			first.Store(req.Session)
			return textResultOf("a"), nil
		})
		s.AddTool(&mcp.Tool{Name: "b", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			same := req.Session == first.Load()
			reused <- same
			if same { // what the session's earlier call left running logs now, while b is in flight
				lateLog(t, req.Session, *miss.Load())
			}
			return textResultOf("b"), nil
		})
	})
	v := harness.StartVMCP(t, nil, be.Config())
	awaitTools(t, v, "lb_a", "lb_b")
	counter := v.Server.Metrics().Undeliverable.WithLabelValues("notifications/message")
	miss.Store(&counter)
	call := func(name string) []map[string]any {
		meta := map[string]any{mcp.MetaKeyLogLevel: "debug", mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}}}
		resp := modernPost(t, ctx(t), v, `1`, "tools/call", name, map[string]any{"name": name, "_meta": meta})
		defer resp.Body.Close()
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			var m map[string]any
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&m))
			return []map[string]any{m}
		}
		return sseMessages(t, resp)
	}
	for range 20 {
		call("lb_a")
		msgs := call("lb_b")
		if !<-reused {
			continue // b got a session of its own; try again
		}
		require.Len(t, msgs, 1, "b's request got a log that is not its call's: %v", msgs)
		assert.Equal(t, 1.0, testutil.ToFloat64(counter), "the late log is not counted once")
		return
	}
	t.Fatal("the pool never reused a's session for b")
}

// lateLog sends a log on ss off any request once its GET stream is
// connected (the go-sdk drops it, with an error, before: vmcp opens that
// stream after its first call may have ended), then waits until vmcp
// counted it undeliverable (miss), so that it arrives while the caller's
// request is in flight.
func lateLog(t *testing.T, ss *mcp.ServerSession, miss prometheus.Counter) {
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	deadline := time.Now().Add(stateWait)
	for ss.Log(context.Background(), &mcp.LoggingMessageParams{Level: "error", Data: "late-from-a"}) != nil && time.Now().Before(deadline) {
		<-tick.C
	}
	for testutil.ToFloat64(miss) < 1 && time.Now().Before(deadline) {
		<-tick.C
	}
}
