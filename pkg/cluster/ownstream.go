package cluster

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/shrink"
	"github.com/vmcp/vmcp/pkg/wire"
)

// An own stream is a standalone GET stream this node serves itself on the
// hijacked HTTP/1.1 connection, instead of hanging in the SDK handler: an
// idle session then costs no goroutine and no net/http buffers for its
// stream. The SDK stores every standalone message in the event store
// (liveEvents) even with no stream attached; liveEvents writes it to the
// session's own stream as the SDK would (event IDs "_N", numbered as the
// SDK numbers them: from the replayed history, then one per message).
//
// Live messages are queued for a writer goroutine that runs only while the
// queue is not empty, so the SDK's loop over every session (a list_changed
// fan-out) never waits on one client's connection.
type ownStream struct {
	mu      sync.Mutex // the connection: writes, pings, close
	conn    net.Conn
	cut     atomic.Pointer[net.Conn] // conn, for close to cut a stuck write without mu
	timeout time.Duration            // bound on each write
	lastIdx int                      // SDK index of the last event written
	closed  bool
	counted bool // in OwnStreams: its connection was taken over
	broken  bool // a write failed: the body may end mid-chunk, nothing more is written
	buf     []byte
	ev      []byte // the event being written

	qmu     sync.Mutex
	log     *slog.Logger
	queue   [][]byte // live messages not yet written
	queued  int      // their bytes
	writing bool     // a writer is draining queue
	lagged  bool     // the queue was full: the stream is ending (logged once)
}

// maxQueued bounds the bytes of live messages waiting for one stream's
// client; beyond it the stream ends (the client resumes from the store).
const maxQueued = 4 << 20

// errQueueFull: the client has not read maxQueued bytes of messages.
var errQueueFull = errors.New("cluster: the GET stream's client is too slow (4 MiB of messages unwritten)")

// errNoHijack: the connection cannot be taken over (HTTP/2, or a writer
// that does not unwrap to net/http's); the SDK handler serves the stream.
var errNoHijack = errors.New("cluster: the connection cannot be hijacked")

// streamLocks serialise, per session, a stream's attach (replay and
// registration) with the storing of that session's standalone messages, so
// that a message is either replayed or written live, once. Each session
// has its own lock (while in use): a slow store operation for one session
// (a replay's XRANGE, an end's DEL) holds up no other session's messages.
type streamLocks struct {
	mu   sync.Mutex
	m    map[string]*sessionLock
	peak shrink.Peak // of m
}

// sessionLock is one session's lock and the number of its holders and
// waiters (the entry is dropped at zero).
type sessionLock struct {
	sync.Mutex
	refs int
}

// lock locks session's lock; it returns the unlock.
func (l *streamLocks) lock(session string) (unlock func()) {
	l.mu.Lock()
	sl := l.m[session]
	if sl == nil {
		if l.m == nil {
			l.m = map[string]*sessionLock{}
		}
		sl = &sessionLock{}
		l.m[session] = sl
	}
	sl.refs++
	l.mu.Unlock()
	sl.Lock()
	return func() {
		sl.Unlock()
		l.mu.Lock()
		if sl.refs--; sl.refs == 0 {
			shrink.Delete(&l.m, &l.peak, session)
		}
		l.mu.Unlock()
	}
}

// lastEventIndex parses a standalone Last-Event-ID ("_N"); -1 when absent.
func lastEventIndex(r *http.Request) (int, error) {
	if len(r.Header.Values("Last-Event-ID")) == 0 {
		return -1, nil
	}
	id := r.Header.Get("Last-Event-ID")
	digits, ok := strings.CutPrefix(id, "_")
	n, err := strconv.ParseUint(digits, 10, 31) // digits only, and no index near overflow
	if !ok || err != nil {
		return 0, fmt.Errorf("malformed Last-Event-ID %s", wire.Quote(id))
	}
	return int(n), nil
}

// responseHead is the status line and headers of an own stream: those set
// so far on w (CORS, by the middleware), the SSE ones, chunked, and
// Connection: close (the connection ends with the stream; a client that
// pooled it would send its next request into a closed connection).
func responseHead(h http.Header) []byte {
	h = h.Clone()
	wire.SSEHeaders(h)
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
	o.setConn(conn)
	_ = conn.SetDeadline(time.Time{})
	o.buf = append(o.buf, head...)
	o.buf = appendChunk(o.buf, wire.AppendComment(nil, "ok"))
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

// setConn makes conn the stream's connection. Requires o.mu.
func (o *ownStream) setConn(conn net.Conn) {
	o.conn = conn
	o.cut.Store(&conn)
}

// appendChunk appends p as one chunk of a chunked body.
func appendChunk(b, p []byte) []byte {
	b = strconv.AppendInt(b, int64(len(p)), 16)
	b = append(b, "\r\n"...)
	b = append(b, p...)
	return append(b, "\r\n"...)
}

// flushLocked writes o.buf within the write timeout; after a failed
// write (the client is gone or stuck) it writes nothing more and fails at
// once. Requires o.mu.
func (o *ownStream) flushLocked() error {
	if o.broken {
		o.buf = o.buf[:0]
		return ErrStreamEnded
	}
	_ = o.conn.SetWriteDeadline(time.Now().Add(o.timeout))
	_, err := o.conn.Write(o.buf)
	o.broken = err != nil
	o.buf = o.buf[:0]
	if cap(o.buf) > 16<<10 {
		o.buf = nil // a large message's buffer is not kept by an idle stream
	}
	return err
}

// eventLocked writes one message as the SDK's SSE event ("message", id
// "_N"; wire.AppendEvent) in one chunk. Requires o.mu.
func (o *ownStream) eventLocked(data []byte) error {
	if o.closed || o.broken {
		return ErrStreamEnded
	}
	o.lastIdx++
	id := "_" + strconv.Itoa(o.lastIdx)
	o.ev = wire.AppendEvent(o.ev[:0], mcp.Event{Name: "message", ID: id, Data: data})
	o.buf = appendChunk(o.buf, o.ev)
	if cap(o.ev) > 16<<10 {
		o.ev = nil // a large message's buffer is not kept by an idle stream
	}
	return o.flushLocked()
}

// send queues one live message and starts the writer if it is idle;
// gone runs (once) if the stream must end: a write failed, or the queue
// is full (errQueueFull, also returned).
func (o *ownStream) send(data []byte, gone func()) error {
	o.qmu.Lock()
	defer o.qmu.Unlock()
	if o.lagged {
		return errQueueFull
	}
	if o.queued+len(data) > maxQueued {
		o.lagged = true
		o.log.Info("cluster: GET stream ended: its client lags too far behind; unwritten messages stay in the event store for its resume", "unwritten_bytes", o.queued)
		gone()
		return errQueueFull
	}
	o.queue = append(o.queue, data)
	o.queued += len(data)
	if !o.writing {
		o.writing = true
		go o.drain(gone)
	}
	return nil
}

// drain is the writer: it writes queued messages in order until the queue
// is empty (then it ends), or a write fails (then gone ends the stream).
func (o *ownStream) drain(gone func()) {
	for {
		o.qmu.Lock()
		if len(o.queue) == 0 {
			o.queue, o.writing = nil, false
			o.qmu.Unlock()
			return
		}
		data := o.queue[0]
		o.queue[0], o.queue = nil, o.queue[1:]
		o.queued -= len(data)
		o.qmu.Unlock()
		o.mu.Lock()
		err := o.eventLocked(data)
		o.mu.Unlock()
		if err != nil {
			gone()
			o.qmu.Lock()
			left := len(o.queue)
			o.queue, o.queued, o.writing = nil, 0, false
			o.qmu.Unlock()
			if !errors.Is(err, ErrStreamEnded) {
				o.log.Info("cluster: GET stream ended: its client is gone; unwritten messages stay in the event store for its resume", "unwritten", left+1, "error", err)
			}
			return
		}
	}
}

// ping writes an SSE comment; an error means the client is gone.
func (o *ownStream) ping() error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.closed {
		return nil
	}
	o.buf = appendChunk(o.buf, wire.AppendComment(nil, "ping"))
	return o.flushLocked()
}

// close ends the response (the last chunk, bounded by lastChunkTimeout,
// unless a write failed) and closes the connection; later writes fail with
// ErrStreamEnded. It waits for a write in progress (an attach's replay, a
// message) and cuts it short by closing the connection under it only when
// it is still stuck after lastChunkTimeout (a client that stopped reading).
func (o *ownStream) close() {
	if !o.mu.TryLock() {
		cut := time.AfterFunc(lastChunkTimeout, func() {
			if c := o.cut.Load(); c != nil {
				_ = (*c).Close() // the writer holding o.mu fails at once
			}
		})
		o.mu.Lock()
		cut.Stop()
	}
	defer o.mu.Unlock()
	if o.closed {
		return
	}
	o.closed = true
	if o.conn == nil { // never attached
		return
	}
	o.buf = append(o.buf[:0], "0\r\n\r\n"...)
	o.timeout = min(o.timeout, lastChunkTimeout)
	_ = o.flushLocked()
	_ = o.conn.Close()
}

// lastChunkTimeout bounds the write of a stream's last chunk: a client
// that cannot take 5 bytes within it is not reading.
const lastChunkTimeout = time.Second

// ErrStreamEnded fails a write to an own stream that has ended.
var ErrStreamEnded = errors.New("cluster: the GET stream has ended")
