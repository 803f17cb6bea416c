package modern

import (
	"encoding/json"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// newTestStream is a callStream for a request whose params are params.
func newTestStream(t *testing.T, params string) (*callStream, *httptest.ResponseRecorder) {
	t.Helper()
	w := httptest.NewRecorder()
	rq := &request{w: w, id: json.RawMessage(`1`), params: json.RawMessage(params)}
	var p struct {
		Meta mcp.Meta `json:"_meta"`
	}
	require.NoError(t, json.Unmarshal(rq.params, &p))
	d := &Dispatcher{log: slog.New(slog.DiscardHandler), opts: Options{Metrics: telemetry.New()}, mgr: backends.NewManager(nil, nil, slog.New(slog.DiscardHandler), "test")}
	return d.newCallStream(rq, "b", p.Meta), w
}

// undeliverable is s's dispatcher's count of undeliverable method messages.
func undeliverable(s *callStream, method string) float64 {
	return testutil.ToFloat64(s.d.opts.Metrics.Undeliverable.WithLabelValues(method))
}

// TestCallStreamForeignTokenDelivered pins progress whose token vmcp did
// not mint for this call: dropped (nothing written) and counted.
func TestCallStreamForeignTokenDelivered(t *testing.T) {
	s, w := newTestStream(t, `{"_meta":{"progressToken":"c"}}`)
	before := undeliverable(s, mcpmsg.MethodProgress)
	s.Notify(mcpmsg.MethodProgress, json.RawMessage(`{"progressToken":"c","progress":1}`)) // the client's, not the minted one
	assert.Equal(t, 1.0, undeliverable(s, mcpmsg.MethodProgress)-before)
	assert.Empty(t, w.Body.String())
	s.Notify(mcpmsg.MethodProgress, json.RawMessage(`{"progressToken":"`+s.minted+`","progress":1}`))
	assert.Contains(t, w.Body.String(), `"progressToken":"c"`, "mapped back to the client's token")
}

// TestCallStreamLogsBelowLevelOrUnasked pins the level filter: nothing
// without logLevel (MUST NOT), only levels at or above the asked one.
func TestCallStreamLogsBelowLevelOrUnasked(t *testing.T) {
	s, w := newTestStream(t, `{"_meta":{"progressToken":1}}`)
	s.Notify(mcpmsg.MethodLog, json.RawMessage(`{"level":"emergency","data":"x"}`))
	assert.Empty(t, w.Body.String(), "a request without logLevel got a log")

	s, w = newTestStream(t, `{"_meta":{"io.modelcontextprotocol/logLevel":"warning"}}`)
	for _, lv := range []string{"debug", "info", "notice", "warning", "error"} {
		s.Notify(mcpmsg.MethodLog, json.RawMessage(`{"level":"`+lv+`","data":"`+lv+`"}`))
	}
	body := w.Body.String()
	assert.Equal(t, 2, strings.Count(body, "event: message"), body)
	assert.Contains(t, body, `"data":"warning"`)
	assert.Contains(t, body, `"data":"error"`)
}

// TestCallStreamLateNotificationWritten pins notifications after the reply:
// never written after the response, counted instead; and the reply of a
// stream that never began stays a JSON body.
func TestCallStreamLateNotificationWritten(t *testing.T) {
	s, w := newTestStream(t, `{"_meta":{"progressToken":"c"}}`)
	s.rq.reply([]byte(`{}`))
	assert.Equal(t, "application/json", w.Header().Get("Content-Type"))
	before := undeliverable(s, mcpmsg.MethodProgress)
	s.Notify(mcpmsg.MethodProgress, json.RawMessage(`{"progressToken":"`+s.minted+`","progress":1}`))
	assert.Equal(t, 1.0, undeliverable(s, mcpmsg.MethodProgress)-before)
	assert.NotContains(t, w.Body.String(), "notifications/progress")

	s, w = newTestStream(t, `{"_meta":{"progressToken":"c"}}`)
	s.Notify(mcpmsg.MethodProgress, json.RawMessage(`{"progressToken":"`+s.minted+`","progress":1}`))
	s.rq.reply([]byte(`{}`))
	body := w.Body.String()
	assert.Equal(t, "text/event-stream", w.Header().Get("Content-Type"))
	assert.Less(t, strings.Index(body, "notifications/progress"), strings.Index(body, `"result"`), body)
}

// TestParkedProgressWithNobodyWaitingWritten pins a parked call's progress
// while no client request waits on it (between rounds): counted, not
// written; with a request waiting, written under that request's token; a
// token the call did not send the backend is counted, not written.
func TestParkedProgressWithNobodyWaitingWritten(t *testing.T) {
	s, w := newTestStream(t, `{"_meta":{"progressToken":"retry-token"}}`)
	ps := &parkedStream{d: s.d, c: &mrtrCall{backend: "b"}, token: "vmcp-progress-x"}
	msg := upstream.Message{Kind: upstream.KindNotification, Method: mcpmsg.MethodProgress, Params: json.RawMessage(`{"progressToken":"vmcp-progress-x","progress":1}`)}
	ps.notify(msg)
	assert.Equal(t, 1.0, undeliverable(s, mcpmsg.MethodProgress))
	assert.Empty(t, w.Body.String())

	ps.out.Store(s)
	ps.notify(msg)
	assert.Contains(t, w.Body.String(), `"progressToken":"retry-token"`)
	ps.notify(upstream.Message{Kind: upstream.KindNotification, Method: mcpmsg.MethodProgress, Params: json.RawMessage(`{"progressToken":"foreign","progress":1}`)})
	assert.Equal(t, 2.0, undeliverable(s, mcpmsg.MethodProgress), "a token the parked call did not send")
}

// TestCallStreamProgressAfterResponseUnlabelled pins progress that reached
// a call's stream after its response was written (the call was still
// attached): it was counted undeliverable with no drop reason, so
// vmcp_progress_dropped_total{reason="after_end"} missed it.
func TestCallStreamProgressAfterResponseUnlabelled(t *testing.T) {
	s, w := newTestStream(t, `{"_meta":{"progressToken":"c"}}`)
	after := s.d.opts.Metrics.ProgressDropped.WithLabelValues("b", mcpmsg.DropAfterEnd)
	s.Notify(mcpmsg.MethodProgress, json.RawMessage(`{"progressToken":"`+s.minted+`","progress":1}`))
	s.finish(200, []byte(`{"jsonrpc":"2.0","id":1,"result":{}}`))
	body := w.Body.String()
	s.Notify(mcpmsg.MethodProgress, json.RawMessage(`{"progressToken":"`+s.minted+`","progress":2}`))
	assert.Equal(t, 1.0, testutil.ToFloat64(after), "late progress not counted as after_end")
	assert.Equal(t, 1.0, undeliverable(s, mcpmsg.MethodProgress))
	assert.Equal(t, body, w.Body.String(), "nothing written after the response")
}
