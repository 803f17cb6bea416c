package wire

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ErrStreamClosed fails a write to a response whose stream has ended.
var ErrStreamClosed = errors.New("the request's response stream has ended")

// SSEHeaders sets the headers of every SSE response vmcp writes:
// text/event-stream, no caching, and X-Accel-Buffering: no (so nginx-style
// proxies pass each event on at once).
func SSEHeaders(h http.Header) {
	h["Content-Type"] = []string{"text/event-stream"}
	h["Cache-Control"] = []string{"no-cache"}
	h["X-Accel-Buffering"] = []string{"no"}
}

// EventWriter writes JSON-RPC messages to one HTTP response (Streamable
// HTTP): as SSE events, each flushed at once, or, when the final message
// is the first, as one JSON body. Safe for concurrent use.
type EventWriter struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	started bool
	closed  bool
	buf     []byte
}

// NewEventWriter writes to w.
func NewEventWriter(w http.ResponseWriter) *EventWriter { return &EventWriter{w: w} }

// Send writes msg as one event (a message with line breaks is split into
// data lines); the first one writes the SSE headers with status 200.
func (e *EventWriter) Send(msg []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.send(msg)
}

// send is Send with e.mu held.
func (e *EventWriter) send(msg []byte) error {
	if e.closed {
		return ErrStreamClosed
	}
	if !e.started {
		SSEHeaders(e.w.Header())
		e.w.WriteHeader(http.StatusOK)
		e.started = true
	}
	e.buf = AppendEvent(e.buf[:0], mcp.Event{Name: "message", Data: msg})
	if _, err := e.w.Write(e.buf); err != nil {
		return err
	}
	return http.NewResponseController(e.w).Flush()
}

// Final writes the last message of the response and ends it: an event
// after earlier events (status then stays 200), else one JSON body with
// status. It closes the stream under the same lock as the last write, so
// no message Sent concurrently follows the final one.
func (e *EventWriter) Final(status int, msg []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.started || e.closed {
		err := e.send(msg)
		e.closed = true
		return err
	}
	e.closed = true
	h := e.w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(msg))}
	e.w.WriteHeader(status)
	if _, err := e.w.Write(msg); err != nil {
		return err
	}
	return http.NewResponseController(e.w).Flush()
}

// Started reports whether an event was written (the response is SSE).
func (e *EventWriter) Started() bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.started
}

// Close ends the stream: later writes fail with ErrStreamClosed.
func (e *EventWriter) Close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
}

// SSEWriter wraps w so that a response another handler (the go-sdk's
// StreamableHTTPHandler) writes as text/event-stream carries the caching
// headers of SSEHeaders too: X-Accel-Buffering: no, and Cache-Control:
// no-cache unless it already says so. It flushes and unwraps
// (http.ResponseController) like w.
func SSEWriter(w http.ResponseWriter) http.ResponseWriter {
	if _, ok := w.(*sseWriter); ok {
		return w
	}
	return &sseWriter{ResponseWriter: w}
}

type sseWriter struct {
	http.ResponseWriter
	once sync.Once
}

// headers completes the SSE headers once, before the status is written.
func (s *sseWriter) headers() {
	s.once.Do(func() {
		h := s.ResponseWriter.Header()
		if !IsMediaType(h.Get("Content-Type"), "text/event-stream") {
			return
		}
		h["X-Accel-Buffering"] = []string{"no"}
		if !strings.Contains(strings.ToLower(strings.Join(h["Cache-Control"], ",")), "no-cache") {
			h["Cache-Control"] = []string{"no-cache"}
		}
	})
}

func (s *sseWriter) WriteHeader(code int) {
	if code >= 200 {
		s.headers()
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *sseWriter) Write(p []byte) (int, error) {
	s.headers()
	return s.ResponseWriter.Write(p)
}

// Flush flushes the underlying writer if it can.
func (s *sseWriter) Flush() {
	s.headers()
	_ = http.NewResponseController(s.ResponseWriter).Flush()
}

// Unwrap gives http.ResponseController the underlying writer.
func (s *sseWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
