package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vmcp/vmcp/pkg/wire"
)

// QueueCapacity bounds the messages of one request waiting between the
// backend's reader and the Stream's consumer. A full queue stops the
// reader, so the backend's response stream stalls (TCP backpressure):
// what a backend sends during a request never piles up in memory.
const QueueCapacity = 16

// Kind tells what a Message is.
type Kind int

// The kinds of message a Stream yields.
const (
	// KindNotification: a notification on the request's stream
	// (notifications/progress, notifications/message, ...).
	KindNotification Kind = iota
	// KindAsk: a server-to-client request on the request's stream
	// (elicitation/create, sampling/createMessage, roots/list): answer it
	// with Stream.Answer.
	KindAsk
	// KindResult: the request's result, the Stream's last message.
	KindResult
)

// Message is one message of the backend during a request, raw.
type Message struct {
	Kind   Kind
	Method string          // notifications and asks
	ID     json.RawMessage // asks: the backend's request id (Answer takes it)
	Params json.RawMessage // notifications and asks
	Result json.RawMessage // KindResult: the result object, checked non-null
	Raw    []byte          // the whole message as the backend sent it (owned)
}

// ErrStreamEnded is Next's error after the Stream's result or error.
var ErrStreamEnded = errors.New("upstream: the stream has ended")

// errAbandoned cancels a request whose Stream was closed before its end.
var errAbandoned = errors.New("the client's side gave the request up")

// Stream is one request's exchange with its backend (Core.Do): Next yields
// what the backend sends, in order, through a queue of QueueCapacity.
// Next, Answer and Close may be called from different goroutines.
type Stream struct {
	core    *Core
	t       Target
	backend string
	method  string
	target  string // the backend's own name or URI (Mcp-Name)
	sess    session
	id      json.RawMessage // vmcp's id of the request on the backend
	done    func(error) error
	release func() // the backend session's use ends

	q          chan *item    // closed by the reader after the last item (items from itemPool)
	ended      chan struct{} // closed when the reader is done
	httpCtx    context.Context
	cancelHTTP context.CancelCauseFunc
	stopClient func() bool // the AfterFunc tying httpCtx to the client's ctx

	mu      sync.Mutex
	timer   *time.Timer // the backend's timeout; stopped while asks wait
	timeout time.Duration
	asks    int // asks yielded and not answered

	over atomic.Bool // the outcome is known: Close no longer cancels
}

// item is one queued message or the final error. The queue holds
// pointers to pooled items (itemPool): a queue of 16 values of 136 bytes
// was 2.2 KB allocated per request, most never used.
type item struct {
	msg Message
	err error
}

// itemPool holds free items: the reader takes one per message, Next gives
// it back once it has copied it out.
var itemPool = sync.Pool{New: func() any { return new(item) }}

// newItem is a pooled item holding msg and err.
func newItem(msg Message, err error) *item {
	it := itemPool.Get().(*item)
	it.msg, it.err = msg, err
	return it
}

// newStream is the Stream of req on sess; client is the caller's context
// (its end cancels the request), sctx the backend span's.
func (c *Core) newStream(client, sctx context.Context, req *Request, t Target, sess session, done func(error) error) *Stream {
	s := &Stream{core: c, t: t, backend: t.Backend.Name(), method: req.Method, target: t.Name, sess: sess,
		id: c.nextID(), done: done, q: make(chan *item, QueueCapacity), ended: make(chan struct{}),
		timeout: t.Backend.Timeout()}
	s.httpCtx, s.cancelHTTP = context.WithCancelCause(context.WithoutCancel(sctx))
	s.stopClient = context.AfterFunc(client, func() { s.cancelHTTP(context.Cause(client)) })
	s.timer = time.AfterFunc(s.timeout, func() { s.cancelHTTP(context.DeadlineExceeded) })
	return s
}

// Backend is the name of the backend the request went to.
func (s *Stream) Backend() string { return s.backend }

// SessionID is the backend's Mcp-Session-Id the request went on ("" for
// a Modern backend, which has none).
func (s *Stream) SessionID() string { return s.sess.ID() }

// Modern reports whether the request went to the backend at a Modern
// revision (its result may be input_required; it asks nothing on the
// stream).
func (s *Stream) Modern() bool { return s.sess.Modern() }

// Next returns the backend's next message; the last is KindResult or an
// error (the client's JSON-RPC error naming the backend, already counted).
// After it, Next returns ErrStreamEnded. ctx bounds this wait only.
func (s *Stream) Next(ctx context.Context) (Message, error) {
	select {
	case it, ok := <-s.q:
		if !ok {
			return Message{}, ErrStreamEnded
		}
		msg, err := it.msg, it.err
		*it = item{}
		itemPool.Put(it)
		return msg, err
	case <-ctx.Done():
		return Message{}, ctx.Err()
	}
}

// Answer sends the client's answer to the ask id on the request's backend
// session: result (raw) or, with err set, an error response. The backend's
// timeout, paused while asks wait, runs again once none does.
func (s *Stream) Answer(ctx context.Context, id, result json.RawMessage, err error) error {
	defer s.answered()
	if s.sess.Modern() {
		return errors.New("upstream: a Modern backend session takes no answers on a stream")
	}
	body := wire.Response(id, result)
	if err != nil {
		body = wire.ErrorResponse(id, err)
	}
	return s.sess.Notify(ctx, body)
}

// Withdrawn tells the Stream that the backend withdrew one of its asks
// (notifications/cancelled): it gets no answer, and the backend's timeout
// runs again once no ask waits, as after Answer.
func (s *Stream) Withdrawn() { s.answered() }

// asked pauses the backend's timeout while an ask waits on the client.
func (s *Stream) asked() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asks++; s.asks == 1 {
		s.timer.Stop()
	}
}

// answered runs the backend's timeout again once no ask waits.
func (s *Stream) answered() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.asks > 0 {
		if s.asks--; s.asks == 0 {
			s.timer.Reset(s.timeout)
		}
	}
}

// Close gives the request up if it has not ended: the backend is told
// (notifications/cancelled on a Legacy or a stdio or SSE session; the
// stream closed on a Modern HTTP one) and the outcome is counted as cancelled. Close does not wait.
func (s *Stream) Close() {
	if !s.over.Load() {
		s.cancelHTTP(errAbandoned)
	}
}

// Wait blocks until the Stream's reader has ended (the outcome counted and
// the backend told of a cancellation).
func (s *Stream) Wait() { <-s.ended }

// push queues one message for the consumer, waiting while the queue is
// full; false when the request was cancelled meanwhile.
func (s *Stream) push(it *item) bool {
	select {
	case s.q <- it:
		s.core.observeQueue(len(s.q))
		return true
	case <-s.httpCtx.Done():
		return false
	}
}

// stop releases the Stream's timer and context ties.
func (s *Stream) stop(cause error) {
	s.release()
	s.timer.Stop()
	s.stopClient()
	s.cancelHTTP(cause)
}
