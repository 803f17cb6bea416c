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
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// call is one in-flight client request sent by upstream.Core.Do: its
// progress token as the client sent it (type preserved) and its stream,
// so progress the backend sends elsewhere than on the request's own stream
// (its GET stream, when it answers POSTs with JSON) still reaches the call.
type call struct {
	backend string
	token   any          // the client's progress token
	stream  clientStream // the call's own stream to the client
	ended   atomic.Bool  // the call is over: its progress token is known only to drop late progress
}

// calls is a client session's in-flight calls by progress token.
type calls struct {
	grace   time.Duration // progressGrace, as configured
	mu      sync.Mutex
	byToken map[string]*call
}

func newCalls(grace time.Duration) *calls {
	return &calls{grace: grace, byToken: map[string]*call{}}
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

// start registers a call with a progress token (none: a no-op), so
// progress the tap sees for it is written to its stream; the returned
// func ends it (its token stays known for the grace period).
func (cs *calls) start(backend string, token any, stream clientStream) func() {
	k := tokenKey(token)
	if k == "" {
		return func() {}
	}
	c := &call{backend: backend, token: token, stream: stream}
	cs.mu.Lock()
	cs.byToken[k] = c
	cs.mu.Unlock()
	return func() {
		c.ended.Store(true)
		time.AfterFunc(cs.grace, func() {
			cs.mu.Lock()
			defer cs.mu.Unlock()
			if cs.byToken[k] == c {
				delete(cs.byToken, k)
			}
		})
	}
}

// byProgressToken returns the in-flight call that owns a progress token.
func (cs *calls) byProgressToken(tok any) *call {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.byToken[tokenKey(tok)]
}

// tap handles a message read off one of this session's backend streams
// before the SDK client sees it: progress is forwarded at once, in order,
// on the originating request's stream with the client's own token.
func (s *clientSession) tap(_ context.Context, backend string, msg *jsonrpc.Request) {
	if msg.Method != "notifications/progress" {
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
		s.d.undeliverable("notifications/progress", s.id, backend, mcpmsg.ErrProgressNoToken)
		return
	case c == nil:
		s.d.undeliverable("notifications/progress", s.id, backend, fmt.Errorf("%w: no in-flight request has token %v", mcpmsg.ErrProgressUnknownToken, p.ProgressToken))
		return
	case c.ended.Load():
		s.d.undeliverable("notifications/progress", s.id, backend, fmt.Errorf("%w: token %v", mcpmsg.ErrProgressAfterEnd, p.ProgressToken))
		return
	}
	p.ProgressToken = c.token
	b, err := json.Marshal(&p)
	if err == nil { // on the call's own stream
		if err = c.stream.send(wire.Notification("notifications/progress", b)); errors.Is(err, errStreamClosed) {
			err = fmt.Errorf("%w: its response was sent (token %v)", mcpmsg.ErrProgressAfterEnd, p.ProgressToken)
		}
	}
	if err != nil {
		s.d.undeliverable("notifications/progress", s.id, backend, err)
	}
}
