package legacy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// maxRelayAsks bounds the server-to-client requests one relayed call may
// have waiting on the client at once; more are refused to the backend.
const maxRelayAsks = 16

// clientStream is where a call's messages to its client go: the relay's
// own POST stream (relayOut), or the stream of a request the go-sdk
// server serves, such as one in a 2025-03-26 batch (sdkOut).
type clientStream interface {
	// send writes a notification (progress, elicitation/complete) on the
	// call's stream.
	send(msg []byte) error
	// request sends the client a server-to-client request on the call's
	// stream and waits for its answer: the raw result, or its error as a
	// *jsonrpc.Error.
	request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error)
}

// relayStream is one call sent through upstream.Core.Do on the client's
// own backend session: it writes what the backend sends during each round
// (upstream.Stream) to the call's stream as it is read.
type relayStream struct {
	s       *clientSession
	out     clientStream
	backend string
	token   string // tokenKey of the client's progressToken ("" for none)

	ctx     context.Context // the call's: its end cancels the request (Do's ctx)
	settled chan struct{}   // closed once the call's outcome is known (and any cancellation sent)

	wg    sync.WaitGroup
	mu    sync.Mutex
	asks  map[string]context.CancelCauseFunc // backend's request id -> cancel
	count int
}

// relayCall sends req (routed; params without _meta) through the call
// core's one sender, round after round, writing the backend's messages to
// out, and returns the backend's raw result or the error for the client
// (errClientCancelled: no response is due). The call is cancelled by the
// client (notifications/cancelled, or its connection closing) and by the
// session's end; Do owns the backend's timeout, the cancellation it sends
// the backend and the 404 resend.
func (s *clientSession) relayCall(r *http.Request, req *upstream.Request, key string, params map[string]json.RawMessage, out *eventWriter) (json.RawMessage, error) {
	ctx, cancel, stop := s.callContext(r.Context(), errClientGone)
	defer stop()
	untrack, ok := s.relayState.track(key, tracked{cancel: cancel})
	if !ok {
		return nil, errDuplicateID
	}
	defer untrack()
	return s.runCall(ctx, req, params, relayOut{out, s, req.Target.Backend.Name()})
}

// callContext is the context of a call whose client's side is parent: it
// is not ended by parent's end as such (so Do drains the backend's stream
// after the response for reuse), but cancelled with cause gone when parent
// ends before stop, with ErrSessionEnded when the session ends, and by
// cancel.
func (s *clientSession) callContext(parent context.Context, gone error) (context.Context, context.CancelCauseFunc, func()) {
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(parent))
	stopClient := context.AfterFunc(parent, func() { cancel(gone) })
	stopEnded := context.AfterFunc(s.ended, func() { cancel(ErrSessionEnded) })
	return ctx, cancel, func() { stopEnded(); stopClient() }
}

// runCall sends req with params through upstream.Core.Do, round after
// round (relay_rounds.go), on the call context ctx, writing the backend's
// messages to out, and returns the backend's raw result or the error for
// the client.
func (s *clientSession) runCall(ctx context.Context, req *upstream.Request, params map[string]json.RawMessage, out clientStream) (json.RawMessage, error) {
	backend := req.Target.Backend.Name()
	// Progress the backend sends elsewhere than on this stream (its GET
	// stream, when it answers POSTs with JSON) reaches the tap by token.
	token := progressToken(req.Meta)
	defer s.calls.start(backend, token, out)()

	rs := &relayStream{s: s, out: out, backend: backend, token: tokenKey(token), ctx: ctx,
		asks: map[string]context.CancelCauseFunc{}, settled: make(chan struct{})}
	res, err := rs.rounds(req, params)
	if err != nil && ctx.Err() != nil {
		s.noteCancelled()
		if cause := context.Cause(ctx); cause == errClientCancelled {
			err = cause
		}
	}
	close(rs.settled)
	rs.endAsks() // the asks still waiting on the client are failed to the backend
	rs.wg.Wait()
	return res, err
}

// progressToken is the progressToken of a request's raw _meta, decoded as
// the tap decodes the backend's (nil for none).
func progressToken(meta json.RawMessage) any {
	if !bytes.Contains(meta, []byte("progressToken")) {
		return nil
	}
	var m struct {
		Token any `json:"progressToken"`
	}
	_ = json.Unmarshal(meta, &m)
	return m.Token
}

// exchange is one round: req with params sent by upstream.Core.Do, its
// notifications and asks handled as they come, then its raw result and
// whether the backend session was Modern.
func (rs *relayStream) exchange(req *upstream.Request, params map[string]json.RawMessage) (json.RawMessage, bool, error) {
	r := *req
	r.Params = wire.Object(params)
	st, err := rs.s.d.core.Do(rs.ctx, &r)
	if err != nil {
		return nil, false, err
	}
	defer st.Close()
	for {
		m, err := st.Next(context.Background()) // the reader always ends the stream
		switch {
		case errors.Is(err, upstream.ErrStreamEnded): // cancelled with the queue full: the outcome was counted
			return nil, st.Modern(), mcpmsg.WireError(rs.backend, ended(rs.ctx))
		case err != nil:
			return nil, st.Modern(), err
		case m.Kind == upstream.KindResult:
			return m.Result, st.Modern(), nil
		case m.Kind == upstream.KindAsk:
			rs.ask(st, &m)
		default:
			rs.notification(&m)
		}
	}
}

// ended is why a request ended without its error reaching the relay.
func ended(ctx context.Context) error {
	if cause := context.Cause(ctx); cause != nil {
		return cause
	}
	return errors.New("the request ended without a response")
}

// notification forwards a backend notification on the call's stream as
// the go-sdk path would deliver it: progress (the client's own token, as
// it was sent on) in order before the response, log messages by the
// session's level, resource updates to this session if subscribed.
func (rs *relayStream) notification(m *upstream.Message) {
	var err error
	switch m.Method {
	case "notifications/progress":
		tok := progressToken(m.Params)
		if tok == nil { // absent or null: it belongs to no request
			err = fmt.Errorf("%w (on the stream of a call that sent %s)", mcpmsg.ErrProgressNoToken, orNone(rs.token))
			break
		}
		if rs.token == "" || tokenKey(tok) != rs.token {
			err = fmt.Errorf("%w: token %v on the stream of a call that sent %s", mcpmsg.ErrProgressUnknownToken, tok, orNone(rs.token))
			break
		}
		err = rs.out.send(m.Raw)
	case "notifications/elicitation/complete":
		err = rs.out.send(m.Raw)
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if err = json.Unmarshal(m.Params, &p); err == nil {
			err = rs.s.front.Log(context.Background(), &p)
		}
	case "notifications/resources/updated":
		var p mcp.ResourceUpdatedNotificationParams
		if err = json.Unmarshal(m.Params, &p); err == nil {
			rs.s.d.resourceUpdated(rs.s, &p)
		}
	case "notifications/cancelled": // the backend withdraws a server-to-client request
		rs.withdraw(m.Params)
	}
	if err != nil {
		rs.s.d.undeliverable(m.Method, rs.s.id, rs.backend, err)
	}
}

// withdraw ends the relayed ask the backend's notifications/cancelled
// (params p) names, if it still waits on the client.
func (rs *relayStream) withdraw(p json.RawMessage) {
	var c struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(p, &c) != nil {
		return
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if cancel := rs.asks[backendKey(c.RequestID)]; cancel != nil {
		cancel(errWithdrawn)
	}
}

func orNone(tokenKey string) string {
	if tokenKey == "" {
		return "none"
	}
	return "another"
}
