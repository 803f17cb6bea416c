package integration

// Adversarial relay tests of failures, transports, sizes and _meta
// (helpers in relay_raw_helpers_test.go).

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// ---------------------------------------------------------------------
// Disconnects, dead and forgetful backends, timeouts.

// TestRelayClientDisconnectCancelsBackendAndLeaksNothing pins a
// client that vanishes mid-call (its connection cut, no cancellation, no
// DELETE): the backend gets notifications/cancelled and its handler ends,
// the session stays usable with the same single backend session, and
// after ten such calls vmcp holds no more goroutines than before.
func TestRelayClientDisconnectCancelsBackendAndLeaksNothing(t *testing.T) {
	b, bl, cancels := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_block"}, b)
	c := raConnect(t, v, `{}`)
	round := func(i int) {
		marker := fmt.Sprintf("cut-%d", i)
		call := c.start(raCallBody(fmt.Sprint(100+i), "b_block", raMarker(marker)))
		expect(t, bl.started, marker, "backend call started")
		call.cut()
		expect(t, bl.done, marker, "backend handler cancelled after the client left")
		require.True(t, cancels.rec.await(func(ids []string) bool { return len(ids) > i }), "no notifications/cancelled")
		status, msgs := c.post(t, raCallBody("1", "b_echo", `,"arguments":{"text":"still"}`))
		require.Equal(t, http.StatusOK, status)
		require.Len(t, msgs, 1)
		require.Equal(t, "b/echo:still", msgs[0].text())
	}
	round(0)
	sessions := backendSessions(b)
	c.hc.CloseIdleConnections()
	runtime.GC()
	base := runtime.NumGoroutine()
	for i := 1; i <= 10; i++ {
		round(i)
	}
	assert.Equal(t, sessions, backendSessions(b), "backend sessions: one per client session, reused")
	assert.Equal(t, 1, v.Server.SessionCount())
	c.hc.CloseIdleConnections()
	var now int
	ok := assert.Eventually(t, func() bool {
		now = runtime.NumGoroutine()
		return now <= base+4
	}, raWait, 20*time.Millisecond, "goroutines: %d before, now more", base)
	if !ok {
		buf := make([]byte, 1<<20)
		t.Logf("goroutines %d -> %d:\n%s", base, now, buf[:runtime.Stack(buf, true)])
	}
}

// TestRelayBackendKilledMidCall pins a relayed call outliving
// its backend: the backend goes down while the call is blocked; the client
// gets a JSON-RPC error naming the backend at once, not at the timeout.
func TestRelayBackendKilledMidCall(t *testing.T) {
	b, bl, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_block", "b_progress"}, b)
	c := connectFlow(t, v, "A", nil)
	errc := make(chan error, 1)
	go func() {
		_, err := c.call(flowCtx(t), "b_block", map[string]any{"marker": "killed"}, nil)
		errc <- err
	}()
	expect(t, bl.started, "killed", "backend call started")
	// Close cuts the connections first, then closes the go-sdk sessions,
	// which waits for the blocked handler: released once the client has
	// its answer.
	closed := make(chan struct{})
	go func() { b.Close(); close(closed) }()
	t.Cleanup(func() { bl.release(); <-closed })
	select {
	case err := <-errc:
		we := rpcError(t, err)
		assert.Contains(t, we.Message, `backend "b"`)
	case <-time.After(raWait):
		t.Fatal("the call did not fail after its backend died")
	}
}

// TestRelayBackendClosedSessionRetried pins a backend that
// really forgot the client's backend session (the go-sdk server closed it,
// so it answers 404 and its GET stream ends): the next relayed call
// succeeds on a new backend session, five times over, and the control
// connection is untouched.
func TestRelayBackendClosedSessionRetried(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_echo"}, b)
	control := map[string]bool{}
	for ss := range b.Server.Sessions() {
		control[ss.ID()] = true
	}
	c := connectFlow(t, v, "A", nil)
	for i := range 5 {
		text := fmt.Sprint("call-", i)
		res, err := c.call(flowCtx(t), "b_echo", map[string]any{"text": text}, nil)
		require.Equal(t, "b/echo:"+text, flowText(res, err))
		closed := 0
		for ss := range b.Server.Sessions() {
			if !control[ss.ID()] {
				_ = ss.Close()
				closed++
			}
		}
		require.Equal(t, 1, closed, "the client's own backend session")
	}
	res, err := c.call(flowCtx(t), "b_echo", map[string]any{"text": "last"}, nil)
	require.Equal(t, "b/echo:last", flowText(res, err))
	for id := range control {
		found := false
		for ss := range b.Server.Sessions() {
			found = found || ss.ID() == id
		}
		assert.True(t, found, "the control session %s survived", id)
	}
}

// TestRelayBackendTimeoutCancelsBackend pins the relay's own
// backend timeout: a call blocked past backends[].timeout fails with
// "timed out" naming the backend, and the backend is told to cancel.
func TestRelayBackendTimeoutCancelsBackend(t *testing.T) {
	b, bl, cancels := raBackend(t, "b", nil, nil)
	v := raVMCP(t, func(c *config.Config) { c.Backends[0].Timeout = config.Duration(300 * time.Millisecond) }, []string{"b_block"}, b)
	c := connectFlow(t, v, "A", nil)
	_, err := c.call(flowCtx(t), "b_block", map[string]any{"marker": "slow"}, nil)
	we := rpcError(t, err)
	assert.Contains(t, we.Message, `backend "b": timed out`)
	expect(t, bl.started, "slow", "backend call started")
	expect(t, bl.done, "slow", "backend handler cancelled at the timeout")
	require.True(t, cancels.rec.await(func(ids []string) bool { return len(ids) > 0 }), "no notifications/cancelled")
}

// ---------------------------------------------------------------------
// Backends answering application/json, sizes, concurrency.

// TestRelayJSONResponseBackend pins a backend that answers
// POSTs with application/json instead of SSE (StreamableHTTPOptions
// JSONResponse): relayed calls, prompts and reads return the backend's
// result, and an elicitation (which such a backend sends on its GET
// stream) still reaches the calling client and completes the call.
func TestRelayJSONResponseBackend(t *testing.T) {
	b, _, _ := raBackend(t, "j", &mcp.StreamableHTTPOptions{JSONResponse: true}, func(s *mcp.Server) {
		addResources(s, "res://j/one")
		s.AddPrompt(&mcp.Prompt{Name: "greet"}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello " + req.Params.Arguments["who"]}}}}, nil
		})
	})
	v := raVMCP(t, nil, []string{"j_echo", "j_elicit"}, b)
	asked := &recorder[string]{}
	c := connectFlow(t, v, "A", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}, ElicitationHandler: answering(asked)})
	before := relayed(v, "tools/call")
	for i := range 5 {
		res, err := c.call(flowCtx(t), "j_echo", map[string]any{"text": fmt.Sprint(i)}, nil)
		require.Equal(t, fmt.Sprintf("j/echo:%d", i), flowText(res, err))
	}
	require.Equal(t, float64(5), relayed(v, "tools/call")-before, "relayed")
	pr, err := c.cs.GetPrompt(flowCtx(t), &mcp.GetPromptParams{Name: "j_greet", Arguments: map[string]string{"who": "you"}})
	require.NoError(t, err)
	require.Equal(t, "hello you", pr.Messages[0].Content.(*mcp.TextContent).Text)
	rr, err := c.cs.ReadResource(flowCtx(t), &mcp.ReadResourceParams{URI: "res://j/one"})
	require.NoError(t, err)
	require.Equal(t, "x", rr.Contents[0].Text)
	res, err := c.call(flowCtx(t), "j_elicit", map[string]any{"marker": "json"}, nil)
	require.Equal(t, "elicited:accept:ans(json)", flowText(res, err))
}

// TestRelayJSONResponseBackendProgressDelivered: a backend that
// answers with application/json sends the call's progress notifications on
// its GET stream (go-sdk streamable.go: with JSONResponse, non-response
// messages go out of band). The go-sdk path routed them by progress token
// to the calling request (calls.go tap); relayed calls must not lose the
// ones that arrive while the call is in flight, and those arriving after
// its response are dropped and counted (after_end), never sent elsewhere.
func TestRelayJSONResponseBackendProgressDelivered(t *testing.T) {
	b, _, _ := raBackend(t, "j", &mcp.StreamableHTTPOptions{JSONResponse: true}, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "slowprogress", InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := 1; i <= 3; i++ {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Message: "json"})
			}
			return flowResult("done"), nil
		})
	})
	logs := &logBuffer{}
	cfg := b.Config()
	cfg.Timeout = config.Duration(5 * time.Minute)
	v := harness.StartVMCPWithOptions(t, vmcp.Options{Logger: logr.FromSlogHandler(slog.NewTextHandler(logs, nil))}, nil, cfg)
	awaitTools(t, v, "j_slowprogress")
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("vmcp says no in-flight call has the token: %t", strings.Contains(logs.String(), "no in-flight request has token"))
		}
	})
	c := connectFlow(t, v, "A", nil)
	// A first call opens the backend session; vmcp opens its GET stream to
	// the backend behind it (backends/transport/getstream.go), and until that stream
	// is connected the backend refuses out-of-band messages ("stream not
	// connected"): the calls' progress needs it.
	res, err := c.call(flowCtx(t), "j_echo", map[string]any{"text": "warm"}, nil)
	require.Equal(t, "j/echo:warm", flowText(res, err))
	b.AwaitGETStreams(t, stateWait)
	for i := range 3 {
		tok := fmt.Sprint("json-", i)
		res, err := c.call(flowCtx(t), "j_slowprogress", nil, tok)
		require.Equal(t, "done", flowText(res, err))
		late := v.Server.Metrics().ProgressDropped.WithLabelValues("j", "after_end")
		require.Eventually(t, func() bool {
			return len(c.progress.all())+int(testutil.ToFloat64(late)) == 3*(i+1)
		}, stateWait, 10*time.Millisecond, "progress notifications for %s: delivered or dropped as late", tok)
	}
	assert.Equal(t, c.wireCount("notifications/progress"), c.onPost("notifications/progress"), "progress only on the calls' own streams, none on the GET stream")
}

// TestRelayLargeArgumentsAndResults pins sizes near the limits:
// a 3 MiB argument (under http.max_body_bytes, 4 MiB) and a 12 MiB result
// (under the 16 MiB event limit) are relayed whole; a body over
// max_body_bytes is refused with 413 and never reaches the backend.
func TestRelayLargeArgumentsAndResults(t *testing.T) {
	var reached sync.Map
	b, _, _ := raBackend(t, "b", nil, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "size", InputSchema: flowSchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var a struct {
				Blob string `json:"blob"`
				Want int    `json:"want"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &a)
			reached.Store(len(a.Blob), true)
			return flowResult("%d:%s", len(a.Blob), strings.Repeat("y", a.Want)), nil
		})
	})
	v := raVMCP(t, nil, []string{"b_size"}, b)
	c := connectFlow(t, v, "A", nil)
	// Megabytes of JSON through three go-sdk codecs under -race: a loaded
	// machine took over 30 s (flowCtx), so these calls get vmcp's own
	// backend timeout (raVMCP: 5 min).
	big, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	blob := strings.Repeat("x", 3<<20)
	res, err := c.call(big, "b_size", map[string]any{"blob": blob, "want": 0}, nil)
	require.Equal(t, fmt.Sprintf("%d:", len(blob)), flowText(res, err))
	want := 12 << 20
	res, err = c.call(big, "b_size", map[string]any{"blob": "", "want": want}, nil)
	require.NoError(t, err)
	require.Equal(t, want+2, len(flowText(res, err)), "12 MiB result")

	rc := raConnect(t, v, `{}`)
	huge := strings.Repeat("z", 4<<20)
	status, _ := rc.post(t, raCallBody("1", "b_size", `,"arguments":{"blob":"`+huge+`"}`))
	require.Equal(t, http.StatusRequestEntityTooLarge, status)
	_, ok := reached.Load(len(huge))
	require.False(t, ok, "an over-limit body reached the backend")
	status, msgs := rc.post(t, raCallBody("2", "b_size", `,"arguments":{"blob":"ok"}`))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "2:", msgs[0].text(), "the session after a 413")
}

// TestRelayConcurrentSessionsOwnProgressAndResults pins
// cross-talk on the relay: four sessions run five concurrent calls each,
// three rounds, with the same progress tokens in every session; every call
// gets its own result and exactly its own five progress notifications, in
// order, on its own stream before its response.
func TestRelayConcurrentSessionsOwnProgressAndResults(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_progress"}, b)
	before := relayed(v, "tools/call")
	var clients []*flowClient
	for i := range 4 {
		clients = append(clients, connectFlow(t, v, fmt.Sprint("S", i), nil))
	}
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			for round := range 3 {
				var inner sync.WaitGroup
				for i := range 5 {
					var tok any = fmt.Sprintf("r%d-%d", round, i)
					if i%2 == 1 {
						tok = round*10 + i
					}
					inner.Go(func() { checkProgressCall(t, c, "b_progress", tok, 5) })
				}
				inner.Wait()
			}
		})
	}
	wg.Wait()
	for _, c := range clients {
		assert.Equal(t, 15*5, len(c.progress.all()), "%s: progress notifications in all", c.name)
	}
	assert.Equal(t, float64(4*15), relayed(v, "tools/call")-before, "every call relayed")
}

// ---------------------------------------------------------------------
// Names and _meta.

// TestRelayNamesNeedingJSONEscaping pins name rewriting that
// breaks JSON: tools whose backend names contain quotes, backslashes,
// non-ASCII, HTML characters and spaces (the go-sdk only warns about such
// names), a prompt with a quote, and resource URIs with quotes and
// unicode, are relayed and reach the right backend item. vmcp advertises
// the tools and the prompt under valid names (aggregator.ValidName); the
// relay sends the backend its own names.
func TestRelayNamesNeedingJSONEscaping(t *testing.T) {
	names := []string{`we"ird`, `back\slash`, "été", "a<b>&c", "sp ace", "ctl\u0001x", "emoji\U0001F600"}
	uris := []string{`res://q/"quoted"`, "res://q/\u00e9t\u00e9", `res://q/back\slash`}
	b, _, _ := raBackend(t, "b", nil, func(s *mcp.Server) {
		for _, n := range names {
			echoTool(s, "b", n)
		}
		addResources(s, uris...)
		s.AddPrompt(&mcp.Prompt{Name: `pr"ompt`}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "quoted prompt"}}}}, nil
		})
	})
	var advertised []string
	for _, n := range names {
		advertised = append(advertised, aggregator.ValidName("b_"+n))
	}
	v := raVMCP(t, nil, advertised, b)
	c := connectFlow(t, v, "A", nil)
	before := relayed(v, "tools/call") + relayed(v, "resources/read") + relayed(v, "prompts/get")
	for _, n := range names {
		res, err := c.call(flowCtx(t), aggregator.ValidName("b_"+n), map[string]any{"text": n}, nil)
		assert.Equal(t, "b/"+n+":"+n, flowText(res, err), "tool %q", n)
	}
	for _, u := range uris {
		rr, err := c.cs.ReadResource(flowCtx(t), &mcp.ReadResourceParams{URI: u})
		if assert.NoError(t, err, "resource %q", u) {
			assert.Equal(t, u, rr.Contents[0].URI)
		}
	}
	pr, err := c.cs.GetPrompt(flowCtx(t), &mcp.GetPromptParams{Name: aggregator.ValidName(`b_pr"ompt`)})
	if assert.NoError(t, err) {
		assert.Equal(t, "quoted prompt", pr.Messages[0].Content.(*mcp.TextContent).Text)
	}
	assert.Equal(t, float64(len(names)+len(uris)+1), relayed(v, "tools/call")+relayed(v, "resources/read")+relayed(v, "prompts/get")-before)
}

// TestRelayReservedMetaNotForwarded pins reserved _meta keys
// reaching a backend: io.modelcontextprotocol/ keys of the client's
// request _meta are stripped (the client's own keys and its progress
// token pass), also when the _meta key itself is spelled with an escape.
func TestRelayReservedMetaNotForwarded(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_meta"}, b)
	c := connectFlow(t, v, "A", nil)
	res, err := c.cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: "b_meta", Meta: mcp.Meta{
		"io.modelcontextprotocol/related-task": map[string]any{"taskId": "x"}, "io.modelcontextprotocol/logLevel": "debug", "keep": 1, "progressToken": "p"}})
	require.Equal(t, "meta:keep,progressToken", flowText(res, err))
	res, err = c.cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: "b_meta", Meta: mcp.Meta{"io.modelcontextprotocol/only": true}})
	require.Equal(t, "meta:", flowText(res, err), "a _meta of reserved keys only")

	rc := raConnect(t, v, `{}`)
	status, msgs := rc.post(t, raCallBody("1", "b_meta", `,"_m\u0065ta":{"io.modelcontextprotocol/x":1,"keep":2}`))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "meta:keep", msgs[0].text(), "escaped _meta key")
}

// TestRelayEscapedReservedMetaKeyNotForwarded: JSON may spell
// "/" as "\/" (PHP's json_encode does by default) or any character as
// \uXXXX; "io.modelcontextprotocol\/x" is the reserved key
// "io.modelcontextprotocol/x" and must be stripped like it.
func TestRelayEscapedReservedMetaKeyNotForwarded(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_meta"}, b)
	rc := raConnect(t, v, `{}`)
	for i, key := range []string{`io.modelcontextprotocol\/x`, `\u0069o.modelcontextprotocol/x`} {
		status, msgs := rc.post(t, raCallBody(fmt.Sprint(i), "b_meta", `,"_meta":{"`+key+`":1,"keep":2}`))
		require.Equal(t, http.StatusOK, status)
		assert.Equal(t, "meta:keep", msgs[0].text(), "reserved key spelled %s", key)
	}
}

// TestRelayReservedResultMetaNotReturned pins reserved _meta
// keys of a backend's result reaching the client: stripped, the backend's
// own keys kept.
func TestRelayReservedResultMetaNotReturned(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_reserved"}, b)
	c := connectFlow(t, v, "A", nil)
	res, err := c.call(flowCtx(t), "b_reserved", nil, nil)
	require.Equal(t, "reserved", flowText(res, err))
	assert.Equal(t, mcp.Meta{"keep": "yes"}, res.Meta)
}

// raSlashEscaper rewrites a backend's responses the way PHP's json_encode
// spells them: every "/" of the reserved prefix as "\/" (same JSON).
type raSlashEscaper struct{ http.ResponseWriter }

func (w raSlashEscaper) Write(p []byte) (int, error) {
	q := bytes.ReplaceAll(p, []byte("io.modelcontextprotocol/"), []byte(`io.modelcontextprotocol\/`))
	if _, err := w.ResponseWriter.Write(q); err != nil {
		return 0, err
	}
	return len(p), nil
}

func (w raSlashEscaper) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// TestRelayEscapedReservedResultMetaNotReturned: a backend
// whose JSON encoder escapes "/" returns the reserved key
// "io.modelcontextprotocol\/related-task"; it is the same key and must not
// reach the client.
func TestRelayEscapedReservedResultMetaNotReturned(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	h := b.HTTP.Config.Handler
	b.HTTP.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(raSlashEscaper{w}, r) })
	v := raVMCP(t, nil, []string{"b_reserved"}, b)
	c := connectFlow(t, v, "A", nil)
	res, err := c.call(flowCtx(t), "b_reserved", nil, nil)
	require.Equal(t, "reserved", flowText(res, err))
	assert.Equal(t, mcp.Meta{"keep": "yes"}, res.Meta)
}

// TestRelayNullAnswerEndsTheCall pins an answer whose result
// is null: relayed as such, the backend's request ends (with an error or
// an empty answer) and so does the call, well before the backend timeout.
func TestRelayNullAnswerEndsTheCall(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	v := raVMCP(t, nil, []string{"b_elicit"}, b)
	c := raConnect(t, v, `{"elicitation":{}}`)
	call := c.start(raCallBody("1", "b_elicit", raMarker("A")))
	ask := call.next(t, "elicitation request")
	require.Equal(t, "elicitation/create", ask.Method, "%s", ask.raw)
	status, _ := c.post(t, `{"jsonrpc":"2.0","id":`+string(ask.ID)+`,"result":null}`)
	assert.Equal(t, http.StatusAccepted, status)
	resp := call.response(t, "the call after a null answer")
	assert.Equal(t, "1", string(resp.ID), "%s", resp.raw)
}

// TestRelayClientLeavesDuringElicitation pins a relayed
// server-to-client request outliving its call: the client's connection is
// cut while the backend waits for its elicitation; the backend's Elicit
// returns (an error, not the backend timeout), the backend is told to
// cancel the call, and the session serves the next call.
func TestRelayClientLeavesDuringElicitation(t *testing.T) {
	returned := make(chan string, 4)
	b, _, cancels := raBackend(t, "b", nil, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "ask", InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, err := req.Session.Elicit(context.WithoutCancel(ctx), &mcp.ElicitParams{Message: "q", RequestedSchema: answerSchema})
			returned <- fmt.Sprint(err != nil)
			return flowResult("asked"), nil
		})
	})
	v := raVMCP(t, nil, []string{"b_ask"}, b)
	c := raConnect(t, v, `{"elicitation":{}}`)
	for i := range 3 {
		call := c.start(raCallBody(fmt.Sprint(i), "b_ask", ``))
		ask := call.next(t, "elicitation request")
		require.Equal(t, "elicitation/create", ask.Method, "%s", ask.raw)
		call.cut()
		expect(t, returned, "true", "the backend's Elicit failed once the client left")
		require.True(t, cancels.rec.await(func(ids []string) bool { return len(ids) > i }), "no notifications/cancelled")
		// The client's late answer to the abandoned request is harmless.
		status, _ := c.post(t, `{"jsonrpc":"2.0","id":`+string(ask.ID)+`,"result":{"action":"accept","content":{"answer":"late"}}}`)
		assert.Less(t, status, 500)
		status, msgs := c.post(t, raCallBody("9", "b_echo", `,"arguments":{"text":"next"}`))
		require.Equal(t, http.StatusOK, status)
		require.Equal(t, "b/echo:next", msgs[0].text())
	}
}
