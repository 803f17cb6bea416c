package mrtr

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"maps"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Errors of a parked call's life.
var (
	// ErrNotParked: the call named by a requestState is not parked here
	// (finished, expired, cancelled or never existed).
	ErrNotParked = errors.New("the call this requestState names is no longer parked")
	// ErrStaleRound: the requestState answers a round that is not the
	// current one (already retried, or an older state).
	ErrStaleRound = errors.New("requestState answers a round that is not the current one")
	// ErrParkTimeout: the client did not retry within the park timeout.
	ErrParkTimeout = errors.New("parked call was not resumed within the park timeout")
	// ErrClientGone: the client closed the request that was waiting.
	ErrClientGone = errors.New("client closed the request")
	// ErrBackendIdle: the backend neither asked nor answered in time.
	ErrBackendIdle = errors.New("backend did not answer in time")
	// ErrMismatch: an input response does not fit the request it answers.
	ErrMismatch = errors.New("input response does not fit its input request")
)

// Outcome is what a waiting client request gets from Call.Next: either the
// backend's server-to-client requests (Asks, non-nil: answer them with an
// input_required result) or the call's end (Result, Err).
type Outcome struct {
	Asks   mcp.InputRequestMap
	Result any
	Err    error
}

// ask is one server-to-client request of the backend awaiting its answer.
type ask struct {
	method string
	params mcp.InputRequest
	reply  chan answer // cap 1
}

type answer struct {
	resp mcp.InputResponse
	err  error
}

// Call is one backend call (tools/call, prompts/get, resources/read) that
// may park between rounds while the Modern client answers the backend's
// requests. Its goroutine runs the backend call and then, once the outcome
// was delivered or abandoned, its cleanup; it ends after both.
type Call struct {
	ID      string // random, sealed into requestState
	Backend string

	ctx    context.Context
	cancel context.CancelCauseFunc
	asks   chan []*ask   // from the backend session (one round's requests together), buffered
	done   chan struct{} // the backend call returned; res and err are set
	res    any
	err    error
	over   chan struct{} // the outcome was delivered, or the call was abandoned
	once   sync.Once

	mu      sync.Mutex
	round   int
	parked  bool
	timer   *time.Timer
	pending map[string]*ask // sent to the client, not yet answered
	seq     int
}

// drainGrace is how long a finished call's context outlives it.
const drainGrace = 2 * time.Second

// NewID returns a random call ID (128 bits, hex).
func NewID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// NewCall returns a call that is not started yet, so it can be recorded
// and bound to its backend session before the backend can ask anything.
// Its context keeps parent's values but not its cancellation: it ends with
// the backend's answer, Cancel, the park timeout or an idle backend.
func NewCall(parent context.Context, id, backend string) *Call {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	return &Call{ID: id, Backend: backend, ctx: ctx, cancel: cancel, asks: make(chan []*ask, 16),
		done: make(chan struct{}), over: make(chan struct{}), pending: map[string]*ask{}}
}

// Start runs the backend call on its own goroutine. cleanup runs once on
// that goroutine, after the call returned and its outcome was delivered
// (abandoned false) or given up (abandoned true); the goroutine then ends.
func (c *Call) Start(call func(context.Context) (any, error), cleanup func(abandoned bool)) {
	go func() {
		c.res, c.err = call(c.ctx)
		close(c.done)
		<-c.over
		cleanup(c.ctx.Err() != nil)
		// Released a little later, so the backend session's HTTP client
		// can drain the response and keep its connection.
		time.AfterFunc(drainGrace, func() { c.cancel(nil) })
	}()
}

// Ask hands one server-to-client request of the backend to the client and
// waits for its answer; it fails when ctx (the backend's request) or the
// call ends first. Called by the backend session's receiving middleware.
func (c *Call) Ask(ctx context.Context, p mcp.InputRequest) (mcp.InputResponse, error) {
	a := &ask{method: methodOf(p), params: p, reply: make(chan answer, 1)}
	if err := c.send(ctx, []*ask{a}); err != nil {
		return nil, err
	}
	return c.await(ctx, a)
}

// send hands one round's requests to the client request waiting (Next).
func (c *Call) send(ctx context.Context, as []*ask) error {
	select {
	case c.asks <- as:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx) // c.ctx's cause when ctx derives from it
	case <-c.ctx.Done():
		return context.Cause(c.ctx)
	}
}

// await waits for the client's answer to a.
func (c *Call) await(ctx context.Context, a *ask) (mcp.InputResponse, error) {
	select {
	case r := <-a.reply:
		return r.resp, r.err
	case <-ctx.Done():
		return nil, context.Cause(ctx) // c.ctx's cause when ctx derives from it
	case <-c.ctx.Done():
		return nil, context.Cause(c.ctx)
	}
}

// Next waits, for one client request, until the backend asks something
// (Outcome.Asks: every unanswered request so far) or the call ends. The end
// of ctx (the client closed its stream) cancels the call, and so does a
// backend silent for idle.
func (c *Call) Next(ctx context.Context, idle time.Duration) (Outcome, error) {
	c.mu.Lock()
	if len(c.pending) > 0 {
		defer c.mu.Unlock()
		return Outcome{Asks: c.snapshot()}, nil
	}
	c.mu.Unlock()
	t := time.NewTimer(idle)
	defer t.Stop()
	select {
	case <-c.done:
		return c.finish(), nil
	default:
	}
	select {
	case <-c.done:
		return c.finish(), nil
	case as := <-c.asks:
		c.mu.Lock()
		defer c.mu.Unlock()
		c.add(as...)
		for more := true; more; {
			select {
			case as := <-c.asks:
				c.add(as...)
			default:
				more = false
			}
		}
		return Outcome{Asks: c.snapshot()}, nil
	case <-ctx.Done():
		c.Cancel(ErrClientGone)
		return Outcome{}, ErrClientGone
	case <-t.C:
		c.Cancel(ErrBackendIdle)
		return Outcome{}, ErrBackendIdle
	}
}

func (c *Call) finish() Outcome {
	c.once.Do(func() { close(c.over) })
	return Outcome{Result: c.res, Err: c.err}
}

// add records as as sent to the client, each under a fresh input request
// ID. c.mu is held.
func (c *Call) add(as ...*ask) {
	for _, a := range as {
		c.seq++
		c.pending[fmt.Sprintf("%s-%d", shortName(a.method), c.seq)] = a
	}
}

func (c *Call) snapshot() mcp.InputRequestMap {
	out := make(mcp.InputRequestMap, len(c.pending))
	for id, a := range c.pending {
		out[id] = a.params
	}
	return out
}

// Park starts the park timeout for the round just sent to the client and
// returns its number, to be sealed into the requestState.
func (c *Call) Park(timeout time.Duration) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.round++
	c.parked = true
	round := c.round
	c.timer = time.AfterFunc(timeout, func() {
		c.mu.Lock()
		live := c.parked && c.round == round
		if live { // under mu: a retry claiming the call now finds it ended
			c.cancel(ErrParkTimeout)
		}
		c.mu.Unlock()
		if live {
			c.Cancel(ErrParkTimeout)
		}
	})
	return round
}

// Resume claims the parked call for a retry answering round, runs claim
// (if not nil: the retry's stream takes the call's progress from now on),
// then delivers responses to the waiting backend requests (IDs it did not
// ask are ignored; unanswered ones are asked again). ErrStaleRound,
// ErrNotParked and ErrMismatch leave the call as it was, claim not run. A
// claim that fails (the retry cannot go on) ends the call with its error,
// the responses undelivered, and Resume returns it.
func (c *Call) Resume(round int, responses mcp.InputResponseMap, claim func() error) error {
	claimed, err := c.resume(round, responses, claim)
	if claimed && err != nil {
		c.Cancel(err)
	}
	return err
}

// resume is Resume under c.mu; claimed reports whether the call was
// claimed (err is then claim's).
func (c *Call) resume(round int, responses mcp.InputResponseMap, claim func() error) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch {
	case c.ctx.Err() != nil:
		return false, ErrNotParked
	case !c.parked || round != c.round:
		return false, ErrStaleRound
	}
	for id, r := range responses {
		if a := c.pending[id]; a != nil && !fits(a.method, r) {
			return false, fmt.Errorf("%w: %q answers %s with %T", ErrMismatch, id, a.method, r)
		}
	}
	c.parked = false
	c.timer.Stop()
	if claim != nil {
		if err := claim(); err != nil {
			return true, err
		}
	}
	for id := range maps.Keys(responses) {
		if a := c.pending[id]; a != nil {
			a.reply <- answer{resp: responses[id]}
			delete(c.pending, id)
		}
	}
	return true, nil
}

// Cancel ends the call: its backend request is cancelled (the backend is
// told), waiting backend requests fail with cause, and cleanup follows.
func (c *Call) Cancel(cause error) {
	c.cancel(cause)
	c.mu.Lock()
	c.parked = false
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	c.once.Do(func() { close(c.over) })
}

// Done is closed when the backend call has returned.
func (c *Call) Done() <-chan struct{} { return c.done }

// methodOf is the JSON-RPC method of a server-to-client request.
func methodOf(p mcp.InputRequest) string {
	switch p.(type) {
	case *mcp.ElicitParams:
		return "elicitation/create"
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		return "sampling/createMessage"
	case *mcp.ListRootsParams:
		return "roots/list"
	}
	return fmt.Sprintf("%T", p)
}

func shortName(method string) string {
	switch method {
	case "elicitation/create":
		return "elicit"
	case "sampling/createMessage":
		return "sample"
	case "roots/list":
		return "roots"
	}
	return "input"
}

// fits reports whether r is a valid answer to a request of method.
func fits(method string, r mcp.InputResponse) bool {
	switch r.(type) {
	case *mcp.ElicitResult:
		return method == "elicitation/create"
	case *mcp.CreateMessageResult, *mcp.CreateMessageWithToolsResult:
		return method == "sampling/createMessage"
	case *mcp.ListRootsResult:
		return method == "roots/list"
	}
	return false
}
