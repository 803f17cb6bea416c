package modern

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/mrtr"
)

// parkSession is a Legacy backend session opened with one Modern client's
// declared capabilities (elicitation, sampling, roots) for calls that may
// park. It serves one call at a time (cur), so each server-to-client
// request it receives belongs to exactly that call.
type parkSession struct {
	cs      *mcp.ClientSession
	key     string
	caps    *mcp.ClientCapabilities
	backend string
	miss    func(method, backend string, err error) // undeliverable messages
	cur     atomic.Pointer[mrtr.Call]
	token   atomic.Pointer[string]     // the progress token the current call sent the backend
	out     atomic.Pointer[callStream] // the client request waiting on the current call (drive)
	dead    atomic.Bool                // the session ended (its Wait returned)
	http    bool                       // streamable HTTP: a message's context tells its request (tap.go)
	since   time.Time                  // idle since (under sessionPool.mu)
}

// parkedCallKey marks the context of a parked call's backend requests with
// its *mrtr.Call (parkedRounds), so notify tells their logs from others.
type parkedCallKey struct{}

// bind makes c the call this session's server-to-client requests go to
// (nil: none; such requests fail), with the progress token it sends the
// backend ("" for none).
func (ps *parkSession) bind(c *mrtr.Call, token string) {
	ps.token.Store(&token)
	ps.out.Store(nil)
	ps.cur.Store(c)
}

// notify is the tap of a parkSession: the backend's progress and log
// messages during the current call go to the client request waiting on it
// now (park.go drive), under that request's own progressToken and filtered
// by its own logLevel; with no request waiting (between rounds), a
// progress token the call did not send, or (HTTP) a log that did not come
// on one of the current call's requests (a late one of an earlier call on
// the session, one on its GET stream), they are dropped and counted.
// Progress once the call's backend request has ended is after_end, also
// before the call's cleanup unbinds its token: drive stops waiting, and
// the client may have its response, before that cleanup runs.
func (ps *parkSession) notify(ctx context.Context, msg *jsonrpc.Request) {
	if msg.Method != backends.MethodProgress && msg.Method != backends.MethodLog {
		return // server-to-client requests: serverRequests
	}
	cur := ps.cur.Load() // before the token: bind stores the token first
	if msg.Method == backends.MethodLog && ps.http {
		if c, _ := ctx.Value(parkedCallKey{}).(*mrtr.Call); c == nil || c != cur {
			ps.miss(msg.Method, ps.backend, errors.New("the log message relates to no call in flight on the parked session"))
			return
		}
	}
	if msg.Method == backends.MethodProgress {
		tok, err := backends.TokenOf(msg.Params)
		if err != nil {
			ps.miss(msg.Method, ps.backend, err)
			return
		}
		if want := ps.token.Load(); want == nil || *want == "" || tok != *want {
			ps.miss(msg.Method, ps.backend, fmt.Errorf("not sent by the parked call: %w", backends.UnmatchedProgress(tok)))
			return
		}
	}
	out := ps.out.Load()
	if out == nil {
		ps.miss(msg.Method, ps.backend, noRequestWaiting(msg.Method, cur))
		return
	}
	out.deliver(msg.Method, msg.Params)
}

// noRequestWaiting is why a message of the parked call cur found no
// client request waiting: progress after cur's backend request ended is
// after_end; otherwise the call is between rounds.
func noRequestWaiting(method string, cur *mrtr.Call) error {
	if method == backends.MethodProgress && cur != nil {
		select {
		case <-cur.Done():
			return fmt.Errorf("%w: the parked call has ended", backends.ErrProgressAfterEnd)
		default:
		}
	}
	return errors.New("no client request is waiting on the parked call")
}

// serverRequests is receiving middleware on a parkSession: the backend's
// elicitation/create, sampling/createMessage and roots/list go to the
// current call's client as input requests, and their answers back to the
// backend. A request for a capability the client did not declare fails.
func (ps *parkSession) serverRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		var ir mcp.InputRequest
		var declared bool
		switch p := req.GetParams().(type) {
		case *mcp.ElicitParams:
			ir, declared = p, ps.caps.Elicitation != nil
		case *mcp.CreateMessageWithToolsParams:
			ir, declared = p, ps.caps.Sampling != nil
		case *mcp.CreateMessageParams:
			ir, declared = p, ps.caps.Sampling != nil
		case *mcp.ListRootsParams:
			ir, declared = p, ps.caps.RootsV2 != nil
		default:
			return next(ctx, method, req)
		}
		if !declared {
			return nil, fmt.Errorf("%s: the client did not declare this capability", method)
		}
		call := ps.cur.Load()
		if call == nil {
			return nil, fmt.Errorf("%s: no client request is waiting on this session", method)
		}
		resp, err := call.Ask(ctx, ir)
		if err != nil {
			return nil, err
		}
		res, ok := resp.(mcp.Result)
		if !ok {
			return nil, fmt.Errorf("%s: unusable answer %T", method, resp)
		}
		return res, nil
	}
}
