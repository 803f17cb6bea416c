package cluster

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/shrink"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/wire"
)

// StandaloneGET reports whether r opens or resumes a session's standalone
// GET stream: a GET without Last-Event-ID, or with one of the standalone
// stream ("_N"; the SDK's other streams have IDs "STREAM_N").
func StandaloneGET(r *http.Request) bool {
	if r.Method != http.MethodGet {
		return false
	}
	id := r.Header.Get("Last-Event-ID")
	return id == "" || strings.HasPrefix(id, "_")
}

// holder is a standalone GET stream served by this node: by vmcp itself
// on the hijacked connection (own), or by the SDK handler (sw).
type holder struct {
	ctx    context.Context // the stream's; cancel ends it
	cancel context.CancelFunc
	sw     *streamWriter // the SDK handler's stream (HTTP/2, HTTP/1.0)
	own    *ownStream    // this node's own stream (HTTP/1.1)
	done   chan struct{} // closed once the stream has ended
}

// ping checks the stream's client with an SSE comment.
func (h *holder) ping() error {
	if h.own != nil {
		return h.own.ping()
	}
	return h.sw.ping()
}

// ServeStream serves a session's standalone GET stream: over HTTP/1.1
// itself, on the hijacked connection (ownStream: no goroutine and no
// net/http buffers while idle), otherwise (HTTP/2, HTTP/1.0) with next
// (the SDK handler).
// It must be called on the session's owner only (every request
// of a session runs there), so this node's own map of streams keeps at
// most one live per session, with no Redis I/O at open, while live or at
// the end. A new GET replaces the stream this node serves for the session
// (evict and replace: a client whose old connection died silently
// reconnects at once; the old stream ends cleanly, and the new one resumes
// from the event store with Last-Event-ID). 503 while Redis is known to be
// unreachable (Check).
//
// While the stream lives, the node's keeper (keeper.go) writes an SSE
// comment every Timing.StreamPing (a liveness check: a failed or stuck
// write ends the stream); every write is bounded by Timing.WriteTimeout.
// An idle stream has no goroutine of its own.
func (c *Cluster) ServeStream(w http.ResponseWriter, r *http.Request, session string, next http.Handler) {
	if err := c.Check(); err != nil {
		WriteUnavailable(w, err)
		return
	}
	if !wire.AcceptsEventStream(r.Header.Values("Accept")) {
		http.Error(w, wire.AcceptGETRequired, http.StatusBadRequest)
		return
	}
	last, err := lastEventIndex(r)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	evicted := c.evict(session)
	if r.Context().Err() != nil {
		return
	}
	if r.ProtoMajor == 1 && r.ProtoMinor >= 1 { // chunked: HTTP/1.1
		if err := c.serveOwn(w, r, session, last); !errors.Is(err, errNoHijack) {
			return
		}
	}
	c.serveSDK(w, r, session, evicted, next)
}

// serveSDK serves a session's standalone GET stream with the SDK handler,
// replacing evicted (the stream evict ended, if any).
func (c *Cluster) serveSDK(w http.ResponseWriter, r *http.Request, session string, evicted *holder, next http.Handler) {
	ctx, cancel := context.WithCancel(r.Context())
	sw := &streamWriter{w: w, rc: http.NewResponseController(w), timeout: c.timing.WriteTimeout}
	h := &holder{ctx: ctx, cancel: cancel, sw: sw, done: make(chan struct{})}
	c.mu.Lock()
	prev := c.holders[session]
	c.holders[session] = h
	c.mu.Unlock()
	if prev != nil && prev != evicted { // a concurrent GET for the session registered first: this one replaces it
		prev.cancel()
		select {
		case <-prev.done:
		case <-time.After(c.timing.WriteTimeout):
		}
	}
	defer func() { // also when next panics (http.ErrAbortHandler)
		cancel()
		sw.finish() // no keeper write reaches w after this
		c.mu.Lock()
		if c.holders[session] == h {
			shrink.Delete(&c.holders, &c.peaks.holders, session)
		}
		c.mu.Unlock()
		close(h.done)
	}()
	next.ServeHTTP(sw, r.WithContext(ctx))
}

// evict ends the standalone stream this node serves for session, if any,
// and waits (bounded by Timing.WriteTimeout) until its handler returned;
// it returns that stream (nil if none).
func (c *Cluster) evict(session string) *holder {
	c.mu.Lock()
	h := c.holders[session]
	c.mu.Unlock()
	if h == nil {
		return nil
	}
	h.cancel()
	select {
	case <-h.done:
	case <-time.After(c.timing.WriteTimeout):
		c.log.Warn("cluster: replaced GET stream still winding down", "session", telemetry.SessionTag(session), "wait", c.timing.WriteTimeout)
	}
	return h
}

// streamWriter serialises the SDK's writes and the liveness pings on one
// SSE response, and bounds each write with a deadline.
type streamWriter struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	rc      *http.ResponseController
	timeout time.Duration
	started bool // the SDK has written the header: pings may follow
	ended   bool // the handler is returning: no more pings
}

func (s *streamWriter) Header() http.Header { return s.w.Header() }

func (s *streamWriter) WriteHeader(code int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	s.w.WriteHeader(code)
}

func (s *streamWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.started = true
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	return s.w.Write(p)
}

// FlushError flushes (http.ResponseController uses it).
func (s *streamWriter) FlushError() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	return s.rc.Flush()
}

func (s *streamWriter) Flush() { _ = s.FlushError() }

// Unwrap gives http.ResponseController the underlying writer.
func (s *streamWriter) Unwrap() http.ResponseWriter { return s.w }

// ping writes an SSE comment and flushes it; an error means the client is gone.
func (s *streamWriter) ping() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.started || s.ended {
		return nil
	}
	_ = s.rc.SetWriteDeadline(time.Now().Add(s.timeout))
	if _, err := s.w.Write(wire.AppendComment(nil, "ping")); err != nil {
		return err
	}
	return s.rc.Flush()
}

// finish stops pings and clears the write deadline for the server's final
// writes.
func (s *streamWriter) finish() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.ended = true
	_ = s.rc.SetWriteDeadline(time.Time{})
}

// WriteUnavailable answers 503 Service Unavailable because of err (an
// ErrUnavailable), with Retry-After and a JSON-RPC error body. The message
// names Redis but not its address or the cause: those are in the logs and
// on /readyz (Status), not for clients.
func WriteUnavailable(w http.ResponseWriter, err error) {
	msg := "Service Unavailable: " + ErrUnavailable.Error() + "; retry later"
	if errors.Is(err, errRecovering) {
		msg = "Service Unavailable: " + errRecovering.Error() + "; retry"
	}
	w.Header().Set("Retry-After", "1")
	wire.WriteError(w, http.StatusServiceUnavailable, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg})
}
