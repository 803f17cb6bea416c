package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// errWithdrawn ends a relayed server-to-client request the backend
// cancelled: it gets no response.
var errWithdrawn = errors.New("request cancelled by the backend")

// errCallEnded ends the relayed server-to-client requests still waiting on
// the client when their call ends.
var errCallEnded = errors.New("the call it belongs to ended")

// endAsks ends every relayed request of the call still waiting.
func (rs *relayStream) endAsks() {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	for _, cancel := range rs.asks {
		cancel(errCallEnded)
	}
}

// ask relays a backend's server-to-client request m (on st's stream:
// elicitation, sampling, roots) to the client on the call's stream, under a
// vmcp id, and sends the client's answer back under the backend's id
// (Stream.Answer). It runs until answered, or until the call ends (the
// backend then gets an error, as from the go-sdk client, so a handler
// waiting on it returns) or the backend withdraws it.
func (rs *relayStream) ask(st *upstream.Stream, m *upstream.Message) {
	rs.mu.Lock()
	if rs.count >= maxRelayAsks {
		rs.mu.Unlock()
		rs.reply(rs.ctx, st, m, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "too many server-to-client requests in flight for one call"})
		return
	}
	rs.count++
	ctx, cancel := context.WithCancelCause(rs.ctx)
	rs.asks[backendKey(m.ID)] = cancel
	rs.mu.Unlock()
	rs.wg.Add(1)
	go func() {
		defer rs.wg.Done()
		defer func() {
			cancel(nil)
			rs.mu.Lock()
			rs.count--
			delete(rs.asks, backendKey(m.ID))
			rs.mu.Unlock()
		}()
		if err := rs.s.undeclaredMethod(m.Method); err != nil {
			rs.reply(ctx, st, m, nil, err)
			return
		}
		res, err := rs.out.request(ctx, m.Method, m.Params)
		if ctx.Err() == nil {
			rs.reply(ctx, st, m, res, err)
			return
		}
		cause := context.Cause(ctx)
		if cause == errWithdrawn {
			st.Withdrawn()
			return
		}
		<-rs.settled // the backend hears of a cancelled call before this error
		fctx, stop := context.WithTimeout(context.Background(), cancelFlush)
		defer stop()
		rs.reply(fctx, st, m, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "request abandoned: " + cause.Error()})
	}()
}

// relayOut is the relay's own POST stream to the client (clientStream):
// a request goes under a fresh vmcp id, and the client's answer, a POST
// the relay intercepts, comes back through the session's relayState.
type relayOut struct {
	*eventWriter
	s       *clientSession
	backend string
}

// request sends the request method (params) to the client under a new id
// and waits for the answer: its raw result, or its error as a
// *jsonrpc.Error.
func (o relayOut) request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	id := o.s.d.newRelayID()
	ch := o.s.relayState.await(id)
	defer o.s.relayState.forget(id)
	if len(params) == 0 {
		params = nil
	}
	if err := o.send(wire.Request(id, method, params)); err != nil {
		o.s.d.undeliverable(method, o.s.id, o.backend, err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "client unreachable: " + err.Error()}
	}
	select {
	case a := <-ch:
		if len(a.Error) == 0 && len(a.Result) == 0 {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "the client answered " + method + " with neither result nor error"}
		}
		if len(a.Error) > 0 {
			var we jsonrpc.Error
			if err := json.Unmarshal(a.Error, &we); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "client sent a malformed error"}
			}
			return nil, &we
		}
		return a.Result, nil
	case <-ctx.Done():
		_ = o.send(wire.Cancelled(id, "")) // best effort: the stream may be gone
		return nil, ctx.Err()
	}
}

// reply sends the answer to the backend's request m on st's backend
// session. The post outlives ctx (bounded by cancelFlush once ctx ends):
// the backend may finish the call, which ends ctx, before it acknowledges
// the answer that let it finish.
func (rs *relayStream) reply(ctx context.Context, st *upstream.Stream, m *upstream.Message, res json.RawMessage, err error) {
	if err == nil && len(res) == 0 {
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no answer to " + m.Method}
	}
	pctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stop := context.AfterFunc(ctx, func() { time.AfterFunc(cancelFlush, cancel) })
	defer stop()
	if perr := st.Answer(pctx, m.ID, res, err); perr != nil {
		rs.s.d.undeliverable(m.Method+" response", rs.s.id, rs.backend, perr)
	}
}
