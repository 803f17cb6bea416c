package transport

import (
	"bytes"
	"context"
	"io"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// Tap sees a backend session's incoming progress notifications (and log
// messages, with SessionOptions.TapLogs) and server-to-client requests as
// they are read off the wire, before the SDK
// client handles them, so a notification is forwarded before the response
// that follows it (the SDK completes calls before it dispatches queued
// notifications). ctx is the backend HTTP request's context, which carries
// the originating call's context values; for stdio it is Background.
type Tap func(ctx context.Context, msg *jsonrpc.Request)

// Tapped reports whether a message with this method goes to the Tap
// (notifications/message only with logs).
func Tapped(method string, logs bool) bool {
	switch method {
	case "notifications/progress", "elicitation/create", "sampling/createMessage", "roots/list":
		return true
	case mcpmsg.MethodLog:
		return logs
	}
	return false
}

// tapMarkers are cheap byte checks done before decoding an SSE event.
var tapMarkers = [][]byte{[]byte(`notifications/progress`), []byte(`elicitation/create`), []byte(`sampling/createMessage`), []byte(`roots/list`)}

var logMarker = []byte(mcpmsg.MethodLog)

// TapHTTP wraps a backend session's HTTP client so every SSE response body
// is read event by event (wire.EventReader: an event over wire.MaxEvent
// fails the read with wire.ErrEventTooLarge instead of being gathered
// whole) and tapped messages reach the Tap first.
func TapHTTP(base *http.Client, tap Tap, logs bool) *http.Client {
	return &http.Client{Transport: &tapTransport{base: base.Transport, tap: tap, logs: logs}}
}

type tapTransport struct {
	base http.RoundTripper
	tap  Tap
	logs bool
}

func (t *tapTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil || wire.MediaType(resp.Header.Get("Content-Type")) != wire.MediaSSE {
		return resp, err
	}
	resp.Body = newTapBody(req.Context(), resp.Body, t.tap, t.logs)
	return resp, nil
}

// tapBody passes an SSE stream on one whole event at a time, as
// wire.EventReader reads it and wire.AppendEvent frames it again (the
// same events, fields and data; comments dropped), calling the Tap on
// each event whose data is a tapped message.
type tapBody struct {
	ctx     context.Context
	er      *wire.EventReader // released by Read when the stream ends
	body    io.Closer
	tap     Tap
	logs    bool   // also tap notifications/message
	pending []byte // bytes of the current event not yet returned
	event   []byte // reused buffer
	err     error
}

// newTapBody taps body, an SSE stream read in ctx.
func newTapBody(ctx context.Context, body io.ReadCloser, tap Tap, logs bool) *tapBody {
	return &tapBody{ctx: ctx, er: wire.NewEventReader(body), body: body, tap: tap, logs: logs}
}

func (b *tapBody) Read(p []byte) (int, error) {
	for len(b.pending) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		b.readEvent()
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

// readEvent reads the next event, taps its data, and queues it framed; at
// the stream's end, or an error, it releases the reader (on the reading
// goroutine, so a concurrent Close never races a release).
func (b *tapBody) readEvent() {
	ev, err := b.er.Event()
	if err != nil {
		b.err = err
		b.er.Release()
		b.er = nil
		return
	}
	// Only events that mention a tapped method (rare) are decoded; the
	// rest pass through untouched.
	if hasMarker(ev.Data, b.logs) {
		if msg, err := jsonrpc.DecodeMessage(bytes.Clone(ev.Data)); err == nil {
			if r, ok := msg.(*jsonrpc.Request); ok && Tapped(r.Method, b.logs) {
				b.tap(b.ctx, r)
			}
		}
	}
	b.event = wire.AppendEvent(b.event[:0], ev)
	b.pending = b.event
}

func hasMarker(data []byte, logs bool) bool {
	for _, m := range tapMarkers {
		if bytes.Contains(data, m) {
			return true
		}
	}
	return logs && bytes.Contains(data, logMarker)
}

func (b *tapBody) Close() error { return b.body.Close() }
