package integration

// Second round of adversarial relay tests: session lifecycle (DELETE,
// shutdown, idle timeout) racing relayed calls, backends that misbehave on
// a call's stream after the response, and the aggregator's withholding of
// colliding names. Helpers are in relay_raw_helpers_test.go ("ra").

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"runtime"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// rsDelete sends DELETE for the client's session and returns the status
// (-1 on a transport error).
func (c *raClient) rsDelete(t *testing.T) int {
	t.Helper()
	req, _ := http.NewRequestWithContext(flowCtx(t), http.MethodDelete, c.url, nil)
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("Mcp-Protocol-Version", legacyVersion)
	resp, err := c.hc.Do(req)
	if err != nil {
		return -1
	}
	resp.Body.Close()
	return resp.StatusCode
}

// within runs f and fails the test if it does not return within d.
func within(t *testing.T, d time.Duration, what string, f func()) {
	t.Helper()
	done := make(chan struct{})
	go func() { defer close(done); f() }()
	select {
	case <-done:
	case <-time.After(d):
		buf := make([]byte, 1<<20)
		t.Fatalf("%s: still running after %s\n%s", what, d, buf[:runtime.Stack(buf, true)])
	}
}

// ---------------------------------------------------------------------
// Session lifecycle racing relayed calls.

// TestRelayDeleteDuringRelayedCallStopsBackendHandler catches a
// DELETE that ends a session while a relayed call is blocked in the
// backend: the DELETE returns promptly, the call's stream ends, and the
// backend handler is cancelled (the backend heard notifications/cancelled
// before its session was deleted), five times over.
func TestRelayDeleteDuringRelayedCallStopsBackendHandler(t *testing.T) {
	b, bl, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_block"}, b)
	for i := range 5 {
		c := raConnect(t, v, `{}`)
		marker := fmt.Sprint("del-", i)
		call := c.start(raCallBody("1", "b_block", raMarker(marker)))
		expect(t, bl.started, marker, "backend call started")
		within(t, 10*time.Second, "DELETE during a relayed call", func() {
			assert.Equal(t, http.StatusNoContent, c.rsDelete(t))
		})
		expect(t, bl.done, marker, "backend handler cancelled after the DELETE")
		for _, m := range call.end(t, "the call after DELETE") {
			if m.Method == "" {
				assert.NotEmpty(t, m.Error, "a call whose session was deleted: %s", m.raw)
			}
		}
	}
	require.Eventually(t, func() bool { return v.Server.SessionCount() == 0 }, raWait, 10*time.Millisecond)
}

// TestRelayServerCloseDuringRelayedCallReturns catches a shutdown
// that hangs on a relayed call: Server.Close with a call blocked in a
// backend returns promptly, the backend's handler is cancelled, and the
// client's call ends with an error rather than hanging.
func TestRelayServerCloseDuringRelayedCallReturns(t *testing.T) {
	b, bl, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_block"}, b)
	c := raConnect(t, v, `{}`)
	call := c.start(raCallBody("1", "b_block", raMarker("shutdown")))
	expect(t, bl.started, "shutdown", "backend call started")
	within(t, 10*time.Second, "Server.Close with a relayed call in flight", func() { _ = v.Server.Close() })
	expect(t, bl.done, "shutdown", "backend handler cancelled at shutdown")
	for _, m := range call.end(t, "the call after shutdown") {
		if m.Method == "" {
			assert.NotEmpty(t, m.Error, "a call cut by shutdown: %s", m.raw)
		}
	}
}

// TestRelayIdleEndedSessionAnswers404 catches a session ended by
// vmcp's own idle timer that the go-sdk handler still serves: a relayed
// call and an SDK-path request on it must get 404 (the client then
// re-initializes), and never reach the backend.
func TestRelayIdleEndedSessionAnswers404(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, func(c *config.Config) { c.Sessions.IdleTimeout = config.Duration(200 * time.Millisecond) }, []string{"b_echo"}, b)
	c := raConnect(t, v, `{}`)
	status, msgs := c.post(t, raCallBody("1", "b_echo", `,"arguments":{"text":"alive"}`))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "b/echo:alive", msgs[0].text())
	require.Eventually(t, func() bool { return v.Server.SessionCount() == 0 }, raWait, 10*time.Millisecond, "idle session ended")
	status, msgs = c.post(t, raCallBody("2", "b_echo", `,"arguments":{"text":"dead"}`))
	assert.Equal(t, http.StatusNotFound, status, "a relayed call on an idle-ended session: %v", msgs)
	status, msgs = c.post(t, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`)
	assert.Equal(t, http.StatusNotFound, status, "tools/list on an idle-ended session: %v", msgs)
}

// TestRelayIdleTimerNotPausedForeverBySDKPathRequests catches an
// idle timer whose pause count leaks on SDK-path POSTs (tools/list,
// notifications, requests the relay hands over): after many of them the
// session must still end once idle.
func TestRelayIdleTimerNotPausedForeverBySDKPathRequests(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, func(c *config.Config) { c.Sessions.IdleTimeout = config.Duration(300 * time.Millisecond) }, []string{"b_echo"}, b)
	require.Eventually(t, func() bool { return v.Server.SessionCount() == 0 }, raWait, 10*time.Millisecond)
	c := raConnect(t, v, `{}`)
	for i := range 10 {
		status, _ := c.post(t, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, 10+i))
		require.Equal(t, http.StatusOK, status)
		status, _ = c.post(t, raCallBody(fmt.Sprint(100+i), "nope", `,"arguments":{}`)) // unknown: handed to the SDK
		require.Equal(t, http.StatusOK, status)
		status, _ = c.post(t, raCancel(`"never-sent"`))
		require.Less(t, status, 500)
		status, _ = c.post(t, `{"jsonrpc":"2.0","id":"vmcp-999999","result":{}}`) // an answer to nothing
		require.Less(t, status, 500)
		status, _ = c.post(t, raCallBody(fmt.Sprint(200+i), "b_echo", `,"arguments":{"text":"x"}`))
		require.Equal(t, http.StatusOK, status)
	}
	require.Eventually(t, func() bool { return v.Server.SessionCount() == 0 }, raWait, 10*time.Millisecond,
		"the session never idled out after SDK-path and relayed POSTs")
}

// ---------------------------------------------------------------------
// Backends misbehaving on a call's stream.

// rsRawBackend is a go-sdk backend whose tools/call of tool "raw" is
// answered by serve instead, on the same session (so vmcp's backend
// session, initialize and tools/list are the go-sdk's).
func rsRawBackend(t *testing.T, serve func(w http.ResponseWriter, r *http.Request, id json.RawMessage, meta json.RawMessage)) *harness.Backend {
	t.Helper()
	b, _, _ := raBackend(t, "b", nil, func(s *mcp.Server) { echoTool(s, "b", "raw") })
	h := b.HTTP.Config.Handler
	b.HTTP.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string          `json:"name"`
				Meta json.RawMessage `json:"_meta"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) != nil || m.Method != "tools/call" || m.Params.Name != "raw" {
			h.ServeHTTP(w, r)
			return
		}
		serve(w, r, m.ID, m.Params.Meta)
	})
	return b
}

func rsEvent(w http.ResponseWriter, msg string) {
	fmt.Fprintf(w, "event: message\ndata: %s\n\n", msg)
	http.NewResponseController(w).Flush()
}

func rsSSE(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
}

func rsResult(id json.RawMessage, text string) string {
	return `{"jsonrpc":"2.0","id":` + string(id) + `,"result":{"content":[{"type":"text","text":"` + text + `"}]}}`
}

// TestRelayBackendStreamHeldOpenAfterResponse catches the drain of a
// backend stream that never ends after its response: the client has its
// response at once, the next calls on the same session are not held up,
// and vmcp cuts the held stream (the backend sees its request end) within
// a few seconds rather than keeping it forever.
func TestRelayBackendStreamHeldOpenAfterResponse(t *testing.T) {
	cut := make(chan struct{}, 16)
	b := rsRawBackend(t, func(w http.ResponseWriter, r *http.Request, id, _ json.RawMessage) {
		rsSSE(w)
		rsEvent(w, rsResult(id, "held"))
		select {
		case <-r.Context().Done():
			cut <- struct{}{}
		case <-time.After(time.Minute):
		}
	})
	v := raVMCP(t, nil, []string{"b_raw", "b_echo"}, b)
	c := raConnect(t, v, `{}`)
	for i := range 3 {
		start := time.Now()
		status, msgs := c.post(t, raCallBody(fmt.Sprint(i), "b_raw", `,"arguments":{}`))
		require.Equal(t, http.StatusOK, status)
		require.Len(t, msgs, 1, "%v", msgs)
		require.Equal(t, "held", msgs[0].text())
		assert.Less(t, time.Since(start), time.Second, "the response waited for the backend's stream to end")
		status, msgs = c.post(t, raCallBody(fmt.Sprint(100+i), "b_echo", `,"arguments":{"text":"next"}`))
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, "b/echo:next", msgs[0].text())
	}
	for i := range 3 {
		select {
		case <-cut:
		case <-time.After(10 * time.Second):
			t.Fatalf("held backend stream %d never cut by vmcp", i)
		}
	}
}

// TestRelayBackendResponseTwiceAndProgressAfterResponse catches a
// backend that answers twice and sends progress after its answer: the
// client gets exactly one response, with the first result, and the
// session keeps working.
func TestRelayBackendResponseTwiceAndProgressAfterResponse(t *testing.T) {
	b := rsRawBackend(t, func(w http.ResponseWriter, r *http.Request, id, _ json.RawMessage) {
		rsSSE(w)
		rsEvent(w, rsResult(id, "first"))
		rsEvent(w, rsResult(id, "second"))
		rsEvent(w, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"t","progress":1}}`)
	})
	v := raVMCP(t, nil, []string{"b_raw"}, b)
	c := raConnect(t, v, `{}`)
	for i := range 3 {
		status, msgs := c.post(t, raCallBody(fmt.Sprint(i), "b_raw", `,"_meta":{"progressToken":"t"},"arguments":{}`))
		require.Equal(t, http.StatusOK, status)
		responses := 0
		for _, m := range msgs {
			if m.Method == "" {
				responses++
				assert.Equal(t, "first", m.text())
			}
		}
		assert.Equal(t, 1, responses, "responses on the call's stream: %v", msgs)
	}
}

// TestRelayBackendPingOnCallStreamAnswered catches a backend's ping
// on a relayed call's stream left unanswered: a go-sdk backend pings the
// client mid-call; the go-sdk client answers, and the call completes.
func TestRelayBackendPingOnCallStreamAnswered(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "pinger", InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			if err := req.Session.Ping(pctx, nil); err != nil {
				return flowFailure("ping: %v", err), nil
			}
			return flowResult("pinged"), nil
		})
	})
	v := raVMCP(t, nil, []string{"b_pinger"}, b)
	c := connectFlow(t, v, "A", nil)
	before := relayed(v, "tools/call")
	for range 3 {
		res, err := c.call(flowCtx(t), "b_pinger", nil, nil)
		require.Equal(t, "pinged", flowText(res, err))
	}
	assert.Equal(t, float64(3), relayed(v, "tools/call")-before)
}

// TestRelayCancelAfterResponseIsHarmless catches a late
// notifications/cancelled (the call's response already sent) breaking the
// session or a later call that reuses the id.
func TestRelayCancelAfterResponseIsHarmless(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_echo"}, b)
	c := raConnect(t, v, `{}`)
	for i := range 5 {
		status, msgs := c.post(t, raCallBody("7", "b_echo", `,"arguments":{"text":"x"}`))
		require.Equal(t, http.StatusOK, status, "round %d", i)
		require.Equal(t, "b/echo:x", msgs[0].text())
		status, _ = c.post(t, raCancel("7"))
		require.Less(t, status, 500, "a late cancel")
	}
}

// TestRelaySequentialTokenReuseWithJSONBackend catches the progress
// grace window (a finished call's token stays known for 2 s) misrouting a
// later call's progress: calls reuse one token back to back on a backend
// that sends progress out of band; each call's progress reaches that call
// while it is in flight, or is dropped as late (after_end), never another
// call's stream.
func TestRelaySequentialTokenReuseWithJSONBackend(t *testing.T) {
	b, _, _ := raBackend(t, "j", &mcp.StreamableHTTPOptions{JSONResponse: true}, nil)
	v := raVMCP(t, nil, []string{"j_progress", "j_echo"}, b)
	c := connectFlow(t, v, "A", nil)
	res, err := c.call(flowCtx(t), "j_echo", map[string]any{"text": "warm"}, nil)
	require.Equal(t, "j/echo:warm", flowText(res, err))
	late := v.Server.Metrics().ProgressDropped.WithLabelValues("j", "after_end")
	for i := range 5 {
		marker := fmt.Sprint("reuse-", i)
		before := testutil.ToFloat64(late)
		res, err := c.call(flowCtx(t), "j_progress", map[string]any{"marker": marker, "n": 2}, "same")
		require.Equal(t, "progressed:"+marker, flowText(res, err))
		mine := func() int {
			return count(c.progress.all(), func(p *mcp.ProgressNotificationParams) bool { return p.Message == marker })
		}
		require.Eventually(t, func() bool { return mine()+int(testutil.ToFloat64(late)-before) == 2 },
			raWait, 10*time.Millisecond, "progress of call %d: delivered or dropped as late", i)
	}
	assert.Len(t, c.progress.all(), c.onPost("notifications/progress"), "no progress on the GET stream")
}

// TestRelayNoGoroutineGrowthOverManyProgressCalls catches goroutines
// held per relayed call with a progress token (grace timers, drains,
// stream taps): after 200 calls and the grace period, vmcp holds about
// as many goroutines as before. No connection is kept alive while it
// counts: the relay drains a backend stream after answering its client,
// so a next call that overlaps the drain opens another connection, and
// idle pooled connections (three goroutines each) are not held per call;
// a connection whose body vmcp never closed still holds its goroutines.
func TestRelayNoGoroutineGrowthOverManyProgressCalls(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	// before vmcp connects: closing an idle connection the transport was
	// about to reuse would fail that POST
	b.HTTP.Config.SetKeepAlivesEnabled(false)
	cfg := b.Config()
	cfg.Timeout = config.Duration(5 * time.Minute)
	v := harness.StartVMCPWithOptions(t, vmcp.Options{ProgressGrace: time.Millisecond}, nil, cfg)
	awaitTools(t, v, "b_progress")
	c := raConnect(t, v, `{}`)
	c.hc.CloseIdleConnections()
	c.hc = &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	call := func(i int) {
		status, msgs := c.post(t, raCallBody(fmt.Sprint(i), "b_progress", fmt.Sprintf(`,"_meta":{"progressToken":%d},"arguments":{"marker":"m","n":2}`, i)))
		require.Equal(t, http.StatusOK, status)
		require.Len(t, msgs, 3, "%v", msgs)
	}
	call(0) // with a 1ms progress grace, its timer is gone by the next count
	runtime.GC()
	base := runtime.NumGoroutine()
	for i := 1; i <= 200; i++ {
		call(i)
	}
	var now int
	ok := assert.Eventually(t, func() bool {
		now = runtime.NumGoroutine()
		return now <= base+6
	}, raWait, 50*time.Millisecond, "goroutines: %d before", base)
	if !ok {
		buf := make([]byte, 1<<20)
		t.Logf("goroutines %d -> %d:\n%s", base, now, buf[:runtime.Stack(buf, true)])
	}
}

// ---------------------------------------------------------------------
// Aggregation: names still colliding are withheld.

// rsToolNames lists vmcp's tools through a fresh client.
func rsToolNames(t *testing.T, v *harness.VMCP) map[string]bool {
	cs := v.Connect(t, legacyVersion, nil)
	defer cs.Close()
	res, err := cs.ListTools(flowCtx(t), nil)
	require.NoError(t, err)
	out := map[string]bool{}
	for _, tool := range res.Tools {
		out[tool.Name] = true
	}
	return out
}

// TestRelayManualThreeWayCollisionResolvedByRemoval catches a name
// withheld under manual resolution that stays withheld (or routes to the
// wrong backend) once the collision is gone: three backends offer "dup";
// none is advertised; two remove it (list_changed) and the remaining one's
// "dup" is advertised and relayed to it.
func TestRelayManualThreeWayCollisionResolvedByRemoval(t *testing.T) {
	var bs []*harness.Backend
	for _, n := range []string{"x", "y", "z"} {
		bs = append(bs, harness.StartBackend(t, n, harness.Stateful, func(s *mcp.Server) {
			echoTool(s, n, "dup")
			echoTool(s, n, "only_"+n)
		}))
	}
	v := raVMCP(t, func(c *config.Config) { c.Aggregation.ConflictResolution = config.StrategyManual }, []string{"only_x", "only_y", "only_z"}, bs...)
	names := rsToolNames(t, v)
	require.False(t, names["dup"], "a name claimed by three backends was advertised: %v", names)
	bs[0].Server.RemoveTools("dup")
	bs[1].Server.RemoveTools("dup")
	require.Eventually(t, func() bool { return rsToolNames(t, v)["dup"] }, raWait, 50*time.Millisecond, "dup advertised once only z offers it")
	c := raConnect(t, v, `{}`)
	status, msgs := c.post(t, raCallBody("1", "dup", `,"arguments":{"text":"q"}`))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "z/dup:q", msgs[0].text())
}

// TestRelayPrefixCollisionAfterOverrideRename catches a rename
// override that collides with another backend's prefixed name: both
// claimants are withheld whatever order the backends connect in, every
// other tool stays advertised, and a call to the withheld name is not
// relayed to either.
func TestRelayPrefixCollisionAfterOverrideRename(t *testing.T) {
	bx, _, _ := raBackend(t, "x", nil, func(s *mcp.Server) { echoTool(s, "x", "other") })
	by, _, _ := raBackend(t, "y", nil, func(s *mcp.Server) { echoTool(s, "y", "tool") })
	v := raVMCP(t, func(c *config.Config) {
		c.Aggregation.ConflictResolution = config.StrategyPrefix
		c.Aggregation.Overrides = map[string]config.BackendOverrides{"x": {Tools: map[string]config.Override{"other": {Name: "y_tool"}}}}
	}, []string{"x_echo", "y_echo"}, bx, by)
	names := rsToolNames(t, v)
	assert.False(t, names["y_tool"], "a colliding name was advertised: %v", names)
	assert.True(t, names["x_echo"] && names["y_echo"], "the other tools: %v", names)
	before := relayed(v, "tools/call")
	c := raConnect(t, v, `{}`)
	status, msgs := c.post(t, raCallBody("1", "y_tool", `,"arguments":{"text":"q"}`))
	require.Equal(t, http.StatusOK, status)
	require.Len(t, msgs, 1)
	assert.NotEmpty(t, msgs[0].Error, "a withheld name was called: %s", msgs[0].raw)
	assert.Equal(t, before, relayed(v, "tools/call"))
}

// ---------------------------------------------------------------------
// Ids in flight on both paths.

// rsCompletionBackend is raBackend plus a prompt "p" whose completion
// blocks until its request ends or release is closed; started gets a value
// per completion begun.
func rsCompletionBackend(t *testing.T) (b *harness.Backend, bl *blocker, started chan string, release chan struct{}) {
	t.Helper()
	started, release = make(chan string, 16), make(chan struct{})
	opts := &mcp.ServerOptions{CompletionHandler: func(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		started <- req.Params.Argument.Value
		select {
		case <-ctx.Done():
		case <-release:
		}
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"done"}}}, nil
	}}
	bl = newBlocker()
	b = flowBackend(t, "b", harness.Stateful, opts, nil, func(s *mcp.Server) {
		bl.add(s, "block")
		echoTool(s, "b", "echo")
		s.AddPrompt(&mcp.Prompt{Name: "p", Arguments: []*mcp.PromptArgument{{Name: "a"}}}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	})
	t.Cleanup(bl.release)
	return b, bl, started, release
}

func rsCompleteBody(id, value string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"completion/complete","params":{"ref":{"type":"ref/prompt","name":"b_p"},"argument":{"name":"a","value":"` + value + `"}}}`
}

// TestRelayRelayedCallWithIDInFlightOnSDKPathRefused catches the
// relay's duplicate-id check seeing only relayed calls: with a
// completion/complete (served by the go-sdk handler) in flight as id 7, a
// relayed tools/call with id 7 must be refused (the go-sdk handler answers
// 400), not run, since a cancellation of 7 could not tell them apart.
func TestRelayRelayedCallWithIDInFlightOnSDKPathRefused(t *testing.T) {
	b, bl, started, release := rsCompletionBackend(t)
	v := raVMCP(t, nil, []string{"b_block"}, b)
	c := raConnect(t, v, `{}`)
	comp := c.start(rsCompleteBody("7", "sdk"))
	expect(t, started, "sdk", "completion in flight")
	call := c.start(raCallBody("7", "b_block", raMarker("relayed")))
	select {
	case m := <-call.msgs:
		assert.NotEmpty(t, m.Error, "the duplicate got %s", m.raw)
	case got := <-bl.started:
		t.Errorf("a relayed call with id 7, in flight on the SDK path, reached the backend (%q)", got)
	case <-time.After(raWait):
		t.Error("the duplicate neither failed nor ran")
	}
	// A cancel of 7 must reach the completion, the only call with that id.
	status, _ := c.post(t, raCancel("7"))
	require.Less(t, status, 500)
	select {
	case m, ok := <-comp.msgs:
		if ok {
			t.Logf("completion after the cancel: %s", m.raw)
		}
	case <-time.After(raWait):
		t.Error("the cancel of id 7 did not end the completion in flight as 7")
	}
	close(release)
	bl.release()
	comp.end(t, "completion")
	call.end(t, "relayed call")
}

// TestRelaySDKPathRequestWithIDInFlightOnRelayRefused is the other
// way round: a relayed call in flight as id 7, then a completion/complete
// with id 7, which the go-sdk handler accepts since it never saw the
// relayed id. It must be refused (400 / -32600) as the go-sdk refuses
// duplicates among its own.
func TestRelaySDKPathRequestWithIDInFlightOnRelayRefused(t *testing.T) {
	b, bl, started, release := rsCompletionBackend(t)
	v := raVMCP(t, nil, []string{"b_block"}, b)
	c := raConnect(t, v, `{}`)
	call := c.start(raCallBody("7", "b_block", raMarker("relayed")))
	expect(t, bl.started, "relayed", "relayed call in flight")
	comp := c.start(rsCompleteBody("7", "sdk"))
	select {
	case m := <-comp.msgs:
		assert.NotEmpty(t, m.Error, "the duplicate got %s", m.raw)
	case got := <-started:
		t.Errorf("a completion with id 7, in flight on the relay, reached the backend (%q)", got)
	case <-time.After(raWait):
		t.Error("the duplicate neither failed nor ran")
	}
	close(release)
	bl.release()
	comp.end(t, "completion")
	call.end(t, "relayed call")
}

// ---------------------------------------------------------------------
// DELETE / shutdown with a relayed server-to-client request pending.

// TestRelayDeleteDuringPendingElicitationReleasesBackend catches a
// DELETE racing a relayed elicitation whose backend ignores cancellation
// while it waits (it only returns once answered): the DELETE returns
// promptly and the backend's Elicit gets an answer (the abandoned error)
// before its session is closed, five times over.
func TestRelayDeleteDuringPendingElicitationReleasesBackend(t *testing.T) {
	returned := make(chan string, 16)
	b, _, _ := raBackend(t, "b", nil, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "ask", InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, err := req.Session.Elicit(context.WithoutCancel(ctx), &mcp.ElicitParams{Message: "q", RequestedSchema: answerSchema})
			returned <- fmt.Sprint(err != nil)
			return flowResult("asked"), nil
		})
	})
	v := raVMCP(t, nil, []string{"b_ask"}, b)
	for i := range 5 {
		c := raConnect(t, v, `{"elicitation":{}}`)
		call := c.start(raCallBody(fmt.Sprint(i), "b_ask", ``))
		ask := call.next(t, "elicitation request")
		require.Equal(t, "elicitation/create", ask.Method, "%s", ask.raw)
		within(t, 10*time.Second, "DELETE with an elicitation pending", func() {
			assert.Equal(t, http.StatusNoContent, c.rsDelete(t))
		})
		select {
		case got := <-returned:
			assert.Equal(t, "true", got)
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: the backend's Elicit never returned after the DELETE", i)
		}
		call.end(t, "the call after DELETE")
	}
	require.Eventually(t, func() bool { return v.Server.SessionCount() == 0 }, raWait, 10*time.Millisecond)
}

// TestRelayServerCloseDuringPendingElicitationReturns: Server.Close
// with a relayed elicitation pending on several sessions returns promptly
// and every backend Elicit returns.
func TestRelayServerCloseDuringPendingElicitationReturns(t *testing.T) {
	returned := make(chan string, 16)
	b, _, _ := raBackend(t, "b", nil, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "ask", InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, err := req.Session.Elicit(context.WithoutCancel(ctx), &mcp.ElicitParams{Message: "q", RequestedSchema: answerSchema})
			returned <- fmt.Sprint(err != nil)
			return flowResult("asked"), nil
		})
	})
	v := raVMCP(t, nil, []string{"b_ask"}, b)
	const n = 4
	for i := range n {
		c := raConnect(t, v, `{"elicitation":{}}`)
		call := c.start(raCallBody(fmt.Sprint(i), "b_ask", ``))
		ask := call.next(t, "elicitation request")
		require.Equal(t, "elicitation/create", ask.Method, "%s", ask.raw)
	}
	within(t, 15*time.Second, "Server.Close with elicitations pending", func() { _ = v.Server.Close() })
	for i := range n {
		select {
		case <-returned:
		case <-time.After(10 * time.Second):
			t.Fatalf("backend Elicit %d never returned after shutdown", i)
		}
	}
}
