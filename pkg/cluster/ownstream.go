package cluster

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/maphash"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// An own stream is a standalone GET stream this node serves itself on the
// hijacked HTTP/1.1 connection, instead of hanging in the SDK handler: an
// idle session then costs no goroutine and no net/http buffers for its
// stream. The SDK stores every standalone message in the event store
// (liveEvents) even with no stream attached; liveEvents writes it to the
// session's own stream as the SDK would (event IDs "_N", numbered as the
// SDK numbers them: from the replayed history, then one per message).
type ownStream struct {
	mu      sync.Mutex
	conn    net.Conn
	timeout time.Duration // bound on each write
	lastIdx int           // SDK index of the last event written
	closed  bool
	buf     []byte
}

// errNoHijack: the connection cannot be taken over (HTTP/2, or a writer
// that does not unwrap to net/http's); the SDK handler serves the stream.
var errNoHijack = errors.New("cluster: the connection cannot be hijacked")

// streamLocks serialise, per session (striped), a stream's attach (replay
// and registration) with the storing of that session's standalone
// messages, so that a message is either replayed or written live, once.
type streamLocks struct {
	seed  maphash.Seed
	locks [64]sync.Mutex
}

func (l *streamLocks) of(session string) *sync.Mutex {
	return &l.locks[maphash.String(l.seed, session)%uint64(len(l.locks))]
}

// lastEventIndex parses a standalone Last-Event-ID ("_N"); -1 when absent.
func lastEventIndex(r *http.Request) (int, error) {
	if len(r.Header.Values("Last-Event-ID")) == 0 {
		return -1, nil
	}
	id := r.Header.Get("Last-Event-ID")
	n, err := strconv.Atoi(strings.TrimPrefix(id, "_"))
	if !strings.HasPrefix(id, "_") || err != nil || n < 0 {
		return 0, fmt.Errorf("malformed Last-Event-ID %q", id)
	}
	return n, nil
}

// acceptsSSE reports whether an Accept header admits text/event-stream
// (as the SDK's check: text/event-stream, text/* or */*, any parameters).
func acceptsSSE(values []string) bool {
	for _, v := range values {
		for _, raw := range strings.Split(v, ",") {
			base, _, _ := strings.Cut(raw, ";")
			switch strings.ToLower(strings.TrimSpace(base)) {
			case "text/event-stream", "text/*", "*/*":
				return true
			}
		}
	}
	return false
}

// responseHead is the status line and headers of an own stream: those set
// so far on w (CORS, by the middleware), the SSE ones, chunked, and
// Connection: close (the connection ends with the stream; a client that
// pooled it would send its next request into a closed connection).
func responseHead(h http.Header) []byte {
	h = h.Clone()
	h["Content-Type"] = []string{"text/event-stream"}
	h["Cache-Control"] = []string{"no-cache"}
	h["X-Accel-Buffering"] = []string{"no"}
	h["Date"] = []string{time.Now().UTC().Format(http.TimeFormat)}
	h["Transfer-Encoding"] = []string{"chunked"}
	h["Connection"] = []string{"close"} // closed at the end: a client must not pool it
	delete(h, "Content-Length")
	var b bytes.Buffer
	b.WriteString("HTTP/1.1 200 OK\r\n")
	_ = h.Write(&b)
	b.WriteString("\r\n")
	return b.Bytes()
}

// attachLocked takes the connection of w over, writes the response head,
// the SDK's priming comment and the replayed history; o then owns the
// connection. Requires o.mu.
func (o *ownStream) attachLocked(w http.ResponseWriter, replay [][]byte) error {
	head := responseHead(w.Header())
	conn, _, err := http.NewResponseController(w).Hijack() // a GET has no body left to read
	if err != nil {
		o.closed = true
		return errors.Join(errNoHijack, err)
	}
	o.conn = conn
	_ = conn.SetDeadline(time.Time{})
	o.buf = append(o.buf, head...)
	o.buf = appendChunk(o.buf, []byte(": ok\n\n"))
	if err := o.flushLocked(); err != nil {
		return err
	}
	for _, data := range replay {
		if err := o.eventLocked(data); err != nil {
			return err
		}
	}
	return nil
}

// appendChunk appends p as one chunk of a chunked body.
func appendChunk(b, p []byte) []byte {
	b = strconv.AppendInt(b, int64(len(p)), 16)
	b = append(b, "\r\n"...)
	b = append(b, p...)
	return append(b, "\r\n"...)
}

// flushLocked writes o.buf within the write timeout. Requires o.mu.
func (o *ownStream) flushLocked() error {
	_ = o.conn.SetWriteDeadline(time.Now().Add(o.timeout))
	_, err := o.conn.Write(o.buf)
	o.buf = o.buf[:0]
	if cap(o.buf) > 16<<10 {
		o.buf = nil // a large message's buffer is not kept by an idle stream
	}
	return err
}

// eventLocked writes one message as the SDK's SSE event ("message", id
// "_N"; a line break in data starts another data line). Requires o.mu.
func (o *ownStream) eventLocked(data []byte) error {
	if o.closed {
		return ErrStreamEnded
	}
	o.lastIdx++
	const head = "event: message\nid: _"
	idx := strconv.AppendInt(make([]byte, 0, 20), int64(o.lastIdx), 10)
	size := len(head) + len(idx) + 2 // the id line's break, the event's blank line
	for line := range bytes.Lines(data) {
		size += len("data: \n") + len(bytes.TrimRight(line, "\r\n"))
	}
	o.buf = strconv.AppendInt(o.buf, int64(size), 16)
	o.buf = append(o.buf, "\r\n"+head...)
	o.buf = append(append(o.buf, idx...), '\n')
	for line := range bytes.Lines(data) {
		o.buf = append(o.buf, "data: "...)
		o.buf = append(append(o.buf, bytes.TrimRight(line, "\r\n")...), '\n')
	}
	o.buf = append(o.buf, "\n\r\n"...)
	return o.flushLocked()
}

// send writes one live message; an error means the client is gone.
func (o *ownStream) send(data []byte) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.eventLocked(data)
}

// ping writes an SSE comment; an error means the client is gone.
func (o *ownStream) ping() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.buf = appendChunk(o.buf, []byte(": ping\n\n"))
	return o.flushLocked()
}

// close ends the response (the last chunk, bounded by the write timeout)
// and closes the connection; later writes fail with ErrStreamEnded.
func (o *ownStream) close() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.closed = true
	if o.conn == nil { // never attached
		return
	}
	o.buf = append(o.buf[:0], "0\r\n\r\n"...)
	_ = o.flushLocked()
	_ = o.conn.Close()
}

// ErrStreamEnded fails a write to an own stream that has ended.
var ErrStreamEnded = errors.New("cluster: the GET stream has ended")

// liveEvents is the event store the SDK handler is given (EventStore): the
// node's store, which also writes each standalone message to its session's
// own stream, and ends that stream when the session closes.
type liveEvents struct {
	mcp.EventStore
	c *Cluster
}

// Append implements mcp.EventStore. A standalone message written to the
// session's own stream counts as delivered even if storing it failed; one
// whose write failed ends the stream (the client resumes from the store).
func (e liveEvents) Append(ctx context.Context, session, stream string, data []byte) error {
	if stream != "" {
		return e.EventStore.Append(ctx, session, stream, data)
	}
	l := e.c.locks.of(session)
	l.Lock()
	err := e.EventStore.Append(ctx, session, stream, data)
	h := e.c.holder(session)
	l.Unlock()
	if h == nil || h.own == nil {
		return err
	}
	if werr := h.own.send(data); werr != nil {
		h.cancel()
		if err == nil {
			return nil // stored: a resume replays it
		}
		return errors.Join(err, werr)
	}
	return nil
}

// SessionClosed implements mcp.EventStore: the session's events are
// forgotten, it is no longer this node's (no stream attaches to it any
// more) and its own stream, if any, ends.
func (e liveEvents) SessionClosed(ctx context.Context, session string) error {
	l := e.c.locks.of(session)
	l.Lock()
	err := e.EventStore.SessionClosed(ctx, session)
	e.c.mu.Lock()
	if p, ok := e.c.sessions[session]; ok {
		delete(e.c.sessions, session)
		e.c.unreserve(p)
	}
	h := e.c.holders[session]
	e.c.mu.Unlock()
	l.Unlock()
	if h != nil && h.own != nil {
		h.cancel()
	}
	return err
}

// holder returns the stream this node serves for session, if any.
func (c *Cluster) holder(session string) *holder {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.holders[session]
}

// serveOwn serves session's standalone stream itself (see ownStream):
// 404 if the session is no longer this node's, 400 if its history after
// last cannot be replayed; errNoHijack if the SDK handler must serve it.
func (c *Cluster) serveOwn(w http.ResponseWriter, r *http.Request, session string, last int) error {
	l := c.locks.of(session)
	l.Lock()
	if _, ok := c.SessionPrincipal(session); !ok {
		l.Unlock()
		http.Error(w, "session not found", http.StatusNotFound)
		return nil
	}
	var replay [][]byte
	for data, err := range c.events.EventStore.After(r.Context(), session, "", last) {
		if err != nil {
			l.Unlock()
			c.log.Info("cluster: GET stream history cannot be replayed", "session", session, "last_event_id", last, "error", err)
			http.Error(w, "failed to replay events", http.StatusBadRequest)
			return nil
		}
		if len(data) > 0 {
			replay = append(replay, data)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	o := &ownStream{timeout: c.timing.WriteTimeout, lastIdx: last}
	h := &holder{ctx: ctx, cancel: cancel, own: o, done: make(chan struct{})}
	o.mu.Lock() // messages stored from here on wait for the replay
	c.mu.Lock()
	prev := c.holders[session]
	c.holders[session] = h
	c.mu.Unlock()
	l.Unlock()
	c.ownStreams.Add(1)
	context.AfterFunc(ctx, func() { c.endOwn(session, h) })
	if prev != nil { // a concurrent GET registered first: this one replaces it
		prev.cancel()
	}
	err := o.attachLocked(w, replay)
	o.mu.Unlock()
	if err != nil {
		cancel()
		<-h.done
	}
	return err
}

// endOwn ends own stream h of session and forgets it.
func (c *Cluster) endOwn(session string, h *holder) {
	h.own.close()
	c.mu.Lock()
	if c.holders[session] == h {
		delete(c.holders, session)
	}
	c.mu.Unlock()
	c.ownStreams.Add(-1)
	close(h.done)
}

// OwnStreams is how many standalone GET streams this node serves on
// hijacked connections (their requests have returned: an endpoint's
// in-flight GET count misses them).
func (c *Cluster) OwnStreams() int { return int(c.ownStreams.Load()) }

// endOwnStreams ends every own stream (Close: the HTTP server does not
// track hijacked connections).
func (c *Cluster) endOwnStreams() {
	c.mu.Lock()
	var own []*holder
	for _, h := range c.holders {
		if h.own != nil {
			own = append(own, h)
		}
	}
	c.mu.Unlock()
	for _, h := range own {
		h.cancel()
	}
	for _, h := range own {
		<-h.done
	}
}
