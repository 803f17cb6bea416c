package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/wire"
)

// call is one in-flight client request forwarded to a backend: the
// request's own context (so the SDK writes on that request's stream) and
// its progress token as the client sent it (type preserved).
type call struct {
	ctx     context.Context
	backend string
	token   any          // nil when the request has no progress token
	stream  *eventWriter // a relayed call's response stream; nil on the go-sdk path
	ended   atomic.Bool  // the call is over: its progress token is known only to drop late progress
}

type callKey struct{}

// withCall marks a backend call's context with its originating call; the
// tap and the SDK's MRTR handlers find it there.
func withCall(ctx context.Context, c *call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// calls is a client session's in-flight calls, by progress token and by
// backend, plus the calls whose streams carried a server-to-client request
// not yet handled (per backend and method, in arrival order).
type calls struct {
	grace   time.Duration // progressGrace, as configured
	mu      sync.Mutex
	byToken map[string]*call
	pending map[string][]*call // backend + " " + method
}

func newCalls(grace time.Duration) *calls {
	return &calls{grace: grace, byToken: map[string]*call{}, pending: map[string][]*call{}}
}

// tokenKey keys a progress token by JSON type and value (1 and "1" differ).
func tokenKey(tok any) string {
	switch v := tok.(type) {
	case string:
		return "s" + v
	case nil:
		return ""
	default:
		return fmt.Sprintf("n%v", v)
	}
}

// start registers an in-flight call; the returned func unregisters it.
func (cs *calls) start(ctx context.Context, backend string, meta mcp.Meta) (*call, func()) {
	c := &call{ctx: ctx, backend: backend}
	if meta != nil {
		c.token = meta["progressToken"]
	}
	return c, cs.add(c)
}

// startRelayed registers a relayed call with a progress token (none: a
// no-op), so progress the tap sees for it is written to its stream.
func (cs *calls) startRelayed(ctx context.Context, backend string, token any, stream *eventWriter) func() {
	if token == nil {
		return func() {}
	}
	return cs.add(&call{ctx: ctx, backend: backend, token: token, stream: stream})
}

func (cs *calls) add(c *call) func() {
	k := tokenKey(c.token)
	if k != "" {
		cs.mu.Lock()
		cs.byToken[k] = c
		cs.mu.Unlock()
	}
	return func() {
		c.ended.Store(true)
		if k != "" {
			time.AfterFunc(cs.grace, func() {
				cs.mu.Lock()
				defer cs.mu.Unlock()
				if cs.byToken[k] == c {
					delete(cs.byToken, k)
				}
			})
		}
		cs.mu.Lock()
		defer cs.mu.Unlock()
		for key, q := range cs.pending {
			cs.pending[key] = without(q, c)
			if len(cs.pending[key]) == 0 {
				delete(cs.pending, key)
			}
		}
	}
}

func without(q []*call, c *call) []*call {
	out := q[:0]
	for _, x := range q {
		if x != c {
			out = append(out, x)
		}
	}
	return out
}

// byProgressToken returns the in-flight call that owns a progress token.
func (cs *calls) byProgressToken(tok any) *call {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.byToken[tokenKey(tok)]
}

// arrived records that a server-to-client request came on c's stream.
func (cs *calls) arrived(c *call, backend, method string) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	k := backend + " " + method
	cs.pending[k] = append(cs.pending[k], c)
}

// origin is the context to send a server-to-client request with: the
// originating call's (so it travels on that call's stream), found in ctx
// (MRTR retries) or from the tap's record; else ctx itself (the GET stream).
func (cs *calls) origin(ctx context.Context, backend, method string) context.Context {
	if c := callFrom(ctx); c != nil {
		return c.ctx
	}
	cs.mu.Lock()
	defer cs.mu.Unlock()
	k := backend + " " + method
	if q := cs.pending[k]; len(q) > 0 {
		cs.pending[k] = q[1:]
		return q[0].ctx
	}
	return ctx
}

// tap handles a message read off one of this session's backend streams
// before the SDK client sees it: progress is forwarded at once, in order,
// on the originating request's stream with the client's own token.
func (s *clientSession) tap(ctx context.Context, backend string, msg *jsonrpc.Request) {
	if msg.Method != "notifications/progress" {
		if c := callFrom(ctx); c != nil && msg.ID.IsValid() {
			s.calls.arrived(c, backend, msg.Method)
		}
		return
	}
	var p mcp.ProgressNotificationParams
	if err := json.Unmarshal(msg.Params, &p); err != nil {
		s.d.undeliverable("notifications/progress", s.id, backend, err)
		return
	}
	c := s.calls.byProgressToken(p.ProgressToken)
	switch {
	case p.ProgressToken == nil: // absent or null: it belongs to no request
		s.d.undeliverable("notifications/progress", s.id, backend, backends.ErrProgressNoToken)
		return
	case c == nil:
		s.d.undeliverable("notifications/progress", s.id, backend, fmt.Errorf("%w: no in-flight request has token %v", backends.ErrProgressUnknownToken, p.ProgressToken))
		return
	case c.ended.Load():
		s.d.undeliverable("notifications/progress", s.id, backend, fmt.Errorf("%w: token %v", backends.ErrProgressAfterEnd, p.ProgressToken))
		return
	}
	p.ProgressToken = c.token
	err := error(nil)
	if c.stream != nil { // a relayed call: on its own response stream
		var b []byte
		if b, err = json.Marshal(&p); err == nil {
			b = wire.Notification("notifications/progress", b)
			if err = c.stream.send(b); errors.Is(err, errStreamClosed) {
				err = fmt.Errorf("%w: its response was sent (token %v)", backends.ErrProgressAfterEnd, p.ProgressToken)
			}
		}
	} else {
		err = s.front.NotifyProgress(c.ctx, &p)
	}
	if err != nil {
		s.d.undeliverable("notifications/progress", s.id, backend, err)
	}
}
