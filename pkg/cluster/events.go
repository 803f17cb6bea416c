package cluster

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"strconv"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/redis/go-redis/v9"

	"github.com/vmcp/vmcp/pkg/shrink"
)

// redisEvents is the mcp.EventStore on Redis Streams: one Redis stream per
// client session (keyspace.events) holding that session's last maxLen
// server-to-client messages, from all of its SSE streams, as entries
// {s: SDK stream ID, i: index in that stream, d: message}. A session's key
// never holds another session's messages, and is deleted when the session
// ends (or expires with its ownership record when the owner dies).
//
// Only the session's owner node appends and replays: every request of a
// session, GET included, is served by its owner. So the owner keeps each
// stream's next index in memory (a message whose write failed leaves a gap
// that a replay detects, mcp.ErrEventsPurged, instead of shifting event
// IDs), and writes behind: Append queues the message for one writer
// goroutine that pipelines XADDs in order, off the call's critical path;
// After first waits until the session's queued messages are written.
type redisEvents struct {
	c         *redisConn
	maxLen    int64         // entries kept per session
	ttl       time.Duration // key lifetime without append or touch
	log       *slog.Logger
	notStored prometheus.Counter // events that could not be written
	queue     chan *evOp
	stopped   chan struct{} // closed when the writer has exited

	sendMu sync.RWMutex // held (R) while sending to queue; close takes it (W)
	closed bool         // queue closed (under sendMu)

	mu       sync.Mutex
	flushed  *sync.Cond // broadcast when queued ops complete
	sessions map[string]*sessionStreams
	peak     shrink.Peak // of sessions
}

// evOp is one queued write: an XADD, or (del) the session's deletion.
type evOp struct {
	session, stream string
	idx             int
	data            []byte
	del             bool
	done            chan error // del only
}

// sessionStreams is the owner's index bookkeeping for one session.
type sessionStreams struct {
	streams map[string]*streamIndex
	order   []string // non-standalone stream IDs, oldest first (for eviction)
	pending int      // queued appends not yet written
}

// streamIndex maps SDK event indices to store indices for one SSE stream.
type streamIndex struct {
	next   int // store index of the next message
	offset int // store index = SDK index + offset (see After)
}

// Writer limits: queued ops, and ops per pipeline.
const (
	evQueue = 4096
	evBatch = 256
)

var _ mcp.EventStore = (*redisEvents)(nil)

func newRedisEvents(c *redisConn, maxLen int, ttl time.Duration, log *slog.Logger, notStored prometheus.Counter) *redisEvents {
	if notStored == nil {
		notStored = prometheus.NewCounter(prometheus.CounterOpts{Name: "vmcp_session_events_not_stored_total"})
	}
	e := &redisEvents{c: c, maxLen: int64(maxLen), ttl: ttl, log: log, notStored: notStored,
		queue: make(chan *evOp, evQueue), stopped: make(chan struct{}), sessions: map[string]*sessionStreams{}}
	e.flushed = sync.NewCond(&e.mu)
	go e.write()
	return e
}

func (e *redisEvents) key(session string) string { return e.c.keys.events(session) }

// stream returns the bookkeeping of (session, stream), creating it. It
// keeps at most maxLen streams besides the standalone one per session: an
// older stream has no entries left and is forgotten (its replay fails as
// purged). Requires e.mu.
func (e *redisEvents) stream(session, stream string) (*sessionStreams, *streamIndex) {
	ss := e.sessions[session]
	if ss == nil {
		ss = &sessionStreams{streams: map[string]*streamIndex{}}
		e.sessions[session] = ss
	}
	si := ss.streams[stream]
	if si == nil {
		si = &streamIndex{}
		ss.streams[stream] = si
		if stream != "" {
			ss.order = append(ss.order, stream)
			if int64(len(ss.order)) > e.maxLen {
				delete(ss.streams, ss.order[0])
				ss.order = ss.order[1:]
			}
		}
	}
	return ss, si
}

// Open implements mcp.EventStore: it starts the stream's bookkeeping; the
// Redis key is created by the first write.
func (e *redisEvents) Open(_ context.Context, session, stream string) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.stream(session, stream)
	return nil
}

// Append implements mcp.EventStore: the message gets the stream's next
// index and is queued for the writer (XADD with exact MAXLEN trimming and
// the key's TTL renewed). It blocks only while the queue is full, at most
// the operation timeout; then, or while Redis is unreachable, the message
// is not stored (a gap) and the error says why.
func (e *redisEvents) Append(_ context.Context, session, stream string, data []byte) error {
	e.sendMu.RLock()
	defer e.sendMu.RUnlock()
	if err := e.c.err(); err != nil || e.closed {
		e.reserve(session, stream, false) // the index is used: a detectable gap
		if err == nil {
			err = errors.New("cluster: event store closed")
		}
		return err
	}
	op := &evOp{session: session, stream: stream, data: data}
	op.idx = e.reserve(session, stream, true)
	if err := e.send(op); err != nil {
		e.complete([]*evOp{op})
		return err
	}
	return nil
}

// send queues op, waiting at most the op timeout. Requires e.sendMu (R).
func (e *redisEvents) send(op *evOp) error {
	select {
	case e.queue <- op:
		return nil
	default:
	}
	t := time.NewTimer(e.c.timeout)
	defer t.Stop()
	select {
	case e.queue <- op:
		return nil
	case <-t.C:
		return fmt.Errorf("%w: %s: event writes are %d behind", ErrUnavailable, e.c.addr, evQueue)
	}
}

// reserve takes the stream's next index, counting it pending if queued.
func (e *redisEvents) reserve(session, stream string, queued bool) int {
	e.mu.Lock()
	defer e.mu.Unlock()
	ss, si := e.stream(session, stream)
	i := si.next
	si.next++
	if queued {
		ss.pending++
	}
	return i
}

// complete marks queued appends as written (or failed: gaps).
func (e *redisEvents) complete(ops []*evOp) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, op := range ops {
		if ss := e.sessions[op.session]; ss != nil && !op.del {
			ss.pending--
		}
	}
	e.flushed.Broadcast()
}

// write is the writer goroutine: it pipelines queued ops in order, in
// batches, until close.
func (e *redisEvents) write() {
	defer close(e.stopped)
	for op := range e.queue {
		batch := []*evOp{op}
	fill:
		for len(batch) < evBatch {
			select {
			case op, ok := <-e.queue:
				if !ok {
					break fill
				}
				batch = append(batch, op)
			default:
				break fill
			}
		}
		err := e.flush(batch)
		if err != nil {
			e.notStored.Add(float64(len(batch)))
			e.log.Warn("cluster: session events not stored; a Last-Event-ID resume across them will fail", "count", len(batch), "error", err)
		}
		e.complete(batch)
		for _, op := range batch {
			if op.done != nil {
				op.done <- err
			}
		}
	}
}

// flush writes one batch in one pipeline.
func (e *redisEvents) flush(batch []*evOp) error {
	return e.c.do(context.Background(), func(ctx context.Context) error {
		_, err := e.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			touched := map[string]bool{}
			for _, op := range batch {
				key := e.key(op.session)
				if op.del {
					p.Del(ctx, key)
					delete(touched, key)
					continue
				}
				p.XAdd(ctx, &redis.XAddArgs{Stream: key, MaxLen: e.maxLen, ID: "*", Values: []any{"s", op.stream, "i", op.idx, "d", op.data}})
				touched[key] = true
			}
			for key := range touched {
				p.PExpire(ctx, key, e.ttl)
			}
			return nil
		})
		return err
	})
}

// After implements mcp.EventStore: the messages of (session, stream) after
// SDK index, or mcp.ErrEventsPurged if any of them is gone. index -1 (a new
// standalone GET, which the SDK answers with the stream's whole history)
// yields what is retained and re-bases the stream's indices on it, so the
// IDs the SDK numbers from there keep matching the store.
func (e *redisEvents) After(ctx context.Context, session, stream string, index int) iter.Seq2[[]byte, error] {
	return func(yield func([]byte, error) bool) {
		e.mu.Lock()
		for e.sessions[session] != nil && e.sessions[session].pending > 0 {
			e.flushed.Wait() // the writer completes every batch within the op timeout
		}
		var si streamIndex
		known := false
		if p := e.sessions[session]; p != nil && p.streams[stream] != nil {
			si, known = *p.streams[stream], true
		}
		e.mu.Unlock()
		switch {
		case !known && index < 0:
			return
		case !known:
			yield(nil, fmt.Errorf("session %s stream %q: %w", session, stream, mcp.ErrEventsPurged))
			return
		case index >= 0 && index+si.offset >= si.next-1:
			return // nothing after index
		case index < 0 && si.next == 0:
			return
		}
		var msgs []redis.XMessage
		err := e.c.do(ctx, func(ctx context.Context) (err error) {
			msgs, err = e.c.rdb.XRange(ctx, e.key(session), "-", "+").Result()
			return err
		})
		if err != nil {
			yield(nil, err)
			return
		}
		data, first := tail(msgs, stream, si.next)
		if index < 0 {
			e.rebase(session, stream, first)
		} else if from := index + si.offset + 1; first > from {
			yield(nil, fmt.Errorf("session %s stream %q after %d: %w", session, stream, index, mcp.ErrEventsPurged))
			return
		} else {
			data = data[from-first:]
		}
		for _, d := range data {
			if !yield(d, nil) {
				return
			}
		}
	}
}

// tail returns the messages of stream that form the contiguous run of
// store indices ending at next-1, and the index of the first of them
// (next if none).
func tail(msgs []redis.XMessage, stream string, next int) ([][]byte, int) {
	var data [][]byte
	first, want := next, next-1
	for k := len(msgs) - 1; k >= 0 && want >= 0; k-- {
		v := msgs[k].Values
		if s, _ := v["s"].(string); s != stream {
			continue
		}
		i, err := strconv.Atoi(fmt.Sprint(v["i"]))
		if err != nil || i > want {
			continue
		}
		if i < want {
			break // a gap: nothing before it can be replayed in order
		}
		d, _ := v["d"].(string)
		data = append(data, []byte(d))
		first, want = i, want-1
	}
	for l, r := 0, len(data)-1; l < r; l, r = l+1, r-1 {
		data[l], data[r] = data[r], data[l]
	}
	return data, first
}

// rebase makes the SDK's index 0 of stream the store index first.
func (e *redisEvents) rebase(session, stream string, first int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if p := e.sessions[session]; p != nil && p.streams[stream] != nil {
		p.streams[stream].offset = first
	}
}

// SessionClosed implements mcp.EventStore: the session's bookkeeping is
// dropped and its key deleted after its queued messages (so none
// re-creates it); it waits for the deletion, bounded by the op timeout.
func (e *redisEvents) SessionClosed(_ context.Context, session string) error {
	e.mu.Lock()
	shrink.Delete(&e.sessions, &e.peak, session)
	e.mu.Unlock()
	op := &evOp{session: session, del: true, done: make(chan error, 1)}
	e.sendMu.RLock()
	var err error
	if e.closed {
		err = e.c.do(context.Background(), func(ctx context.Context) error { return e.c.rdb.Del(ctx, e.key(session)).Err() })
	} else if err = e.send(op); err == nil {
		err = <-op.done // the writer answers every op within the op timeout
	}
	e.sendMu.RUnlock()
	return err
}

// close writes what is queued and stops the writer.
func (e *redisEvents) close() {
	e.sendMu.Lock()
	if !e.closed {
		e.closed = true
		close(e.queue)
	}
	e.sendMu.Unlock()
	<-e.stopped
}

// touch renews the TTL of sessions' event logs (the owner's heartbeat).
func (e *redisEvents) touch(ctx context.Context, sessions []string, ttl time.Duration) error {
	for len(sessions) > 0 {
		batch := sessions[:min(len(sessions), refreshBatch)]
		sessions = sessions[len(batch):]
		err := e.c.do(ctx, func(ctx context.Context) error {
			_, err := e.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, id := range batch {
					p.PExpire(ctx, e.key(id), ttl)
				}
				return nil
			})
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}
