package cluster

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"
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

// holder is a standalone GET stream served by this node.
type holder struct {
	token  string
	ctx    context.Context // the stream's; cancel ends it
	cancel context.CancelFunc
	sw     *streamWriter
	done   chan struct{} // closed once the stream's handler has returned
}

func leaseKey(session string) string { return "get:" + session }

// ServeStream serves a session's standalone GET stream with next (the SDK
// handler), holding the session's stream lease so that at most one such
// stream is live across the cluster. A new GET replaces the stream this
// node serves for the session (evict and replace: a client whose old
// connection died silently reconnects at once; the old stream ends
// cleanly, and the new one resumes from the event store with
// Last-Event-ID). A lease held elsewhere is waited for up to
// Timing.StreamTTL (a lease no longer renewed frees it), else 409
// Conflict; 503 if Redis is unreachable.
//
// While the stream lives, the node's keeper (keeper.go) writes an SSE
// comment every StreamTTL/3 (a liveness check: a failed or stuck write ends
// the stream) and renews the lease; every write is bounded by
// Timing.WriteTimeout. An idle stream has no goroutine of its own.
func (c *Cluster) ServeStream(w http.ResponseWriter, r *http.Request, session string, next http.Handler) {
	token := rand.Text()
	c.evict(session)
	ok, err := c.acquire(r.Context(), session, token)
	switch {
	case r.Context().Err() != nil:
		return
	case err != nil:
		WriteUnavailable(w, err)
		return
	case !ok:
		http.Error(w, "Conflict: another GET stream is live for this session", http.StatusConflict)
		return
	}
	ctx, cancel := context.WithCancel(r.Context())
	sw := &streamWriter{w: w, rc: http.NewResponseController(w), timeout: c.timing.WriteTimeout}
	h := &holder{token: token, ctx: ctx, cancel: cancel, sw: sw, done: make(chan struct{})}
	c.mu.Lock()
	prev := c.holders[session]
	c.holders[session] = h
	c.mu.Unlock()
	if prev != nil { // its lease lapsed (not renewed): it is not the live stream any more
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
			delete(c.holders, session)
		}
		c.mu.Unlock()
		close(h.done)
		dctx, dcancel := context.WithTimeout(context.Background(), c.timing.OpTimeout)
		defer dcancel()
		_ = c.leases.Drop(dctx, leaseKey(session), token)
	}()
	next.ServeHTTP(sw, r.WithContext(ctx))
}

// evict ends the standalone stream this node serves for session, if any,
// and waits (bounded by Timing.WriteTimeout) until its handler returned and
// dropped its lease.
func (c *Cluster) evict(session string) {
	c.mu.Lock()
	h := c.holders[session]
	c.mu.Unlock()
	if h == nil {
		return
	}
	h.cancel()
	select {
	case <-h.done:
	case <-time.After(c.timing.WriteTimeout):
		c.log.Warn("cluster: replaced GET stream still winding down", "session", session, "wait", c.timing.WriteTimeout)
	}
}

// acquire takes the session's stream lease, waiting up to StreamTTL while
// another holder has it (and asking a local holder to check its client).
func (c *Cluster) acquire(ctx context.Context, session, token string) (bool, error) {
	deadline := time.Now().Add(c.timing.StreamTTL)
	poll := min(max(c.timing.StreamTTL/30, 20*time.Millisecond), 200*time.Millisecond)
	for {
		ok, err := c.leases.Hold(ctx, leaseKey(session), token, c.timing.StreamTTL)
		if err != nil || ok {
			return ok, err
		}
		c.mu.Lock()
		h := c.holders[session]
		c.mu.Unlock()
		if h != nil && h.sw.ping() != nil { // its client is gone: end it now
			h.cancel()
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(poll):
		}
	}
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
	if _, err := io.WriteString(s.w, ": ping\n\n"); err != nil {
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
	body, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": -32603, "message": msg},
	})
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write(body)
}
