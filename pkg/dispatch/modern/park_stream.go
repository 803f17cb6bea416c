package modern

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/mrtr"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// A Modern client's call, get or read to a Legacy HTTP backend goes
// through the call core's one sender (upstream.Core.Do, routed ViaKeyed)
// on the backend session keyed by the client's principal and declared
// capabilities. When the backend asks (elicitation/create,
// sampling/createMessage, roots/list on the request's stream), the
// request's Stream is parked: its mrtr.Call, in the parked Directory,
// holds it while the client gets the asks as an input_required result;
// the client's retry answers them (Stream.Answer) and the same Stream is
// read on, its progress and logs on the retry's response.

// maxAsks bounds the asks of one backend request waiting on the client.
const maxAsks = 64

// parkedStream is the backend side of one such call: the rounds of its
// backend request, read from the Stream as the backend sends them.
type parkedStream struct {
	d       *Dispatcher
	c       *mrtrCall
	req     upstream.Request        // what each round sends (Params: per round)
	caps    *mcp.ClientCapabilities // what the backend may ask the client (nil: nothing)
	token   string                  // the progress token the backend got ("" none)
	out     atomic.Pointer[callStream]
	pending atomic.Int32 // asks handed to the client and not answered
}

// newParkedStream is c's backend side for rq routed to t.
func (d *Dispatcher) newParkedStream(rq *request, req *upstream.Request, t upstream.Target, c *mrtrCall, meta mcp.Meta) (*parkedStream, error) {
	caps, _, _ := parkCaps(rq.clientCaps)
	m, err := streamMeta(meta, rq.stream.minted)
	if err != nil {
		return nil, invalidParams("%s: _meta: %v", c.method, err)
	}
	ps := &parkedStream{d: d, c: c, caps: caps, token: rq.stream.minted}
	ps.req = *req
	ps.req.Target, ps.req.Meta, ps.req.AskCaps = &t, m, caps
	ps.req.Caps, ps.req.LogLevel = objectJSON(rq.clientCaps), rq.stream.level()
	ps.out.Store(rq.stream)
	return ps, nil
}

// streamMeta is the _meta the backend gets: the client's without the
// per-hop io.modelcontextprotocol/* keys, the progress token minted for
// the call in place of the client's.
func streamMeta(m mcp.Meta, token string) (json.RawMessage, error) {
	out := mcpmsg.ForwardMeta(m)
	if token != "" {
		if out == nil {
			out = mcp.Meta{}
		}
		out["progressToken"] = token
	}
	if out == nil {
		return nil, nil
	}
	return json.Marshal(out)
}

// parkStream serves c, routed ViaKeyed to t. A client that can be asked
// gets a parked call (park limits, timeout and Directory as for every
// parked call); else the rounds run on the request itself and an ask is
// refused to the backend.
func (d *Dispatcher) parkStream(rq *request, req *upstream.Request, t upstream.Target, c *mrtrCall) ([]byte, error) {
	ps, err := d.newParkedStream(rq, req, t, c, c.meta)
	if err != nil {
		return nil, err
	}
	if ps.caps == nil {
		res, err := ps.rounds(rq.r.Context(), nil)
		if err != nil {
			return nil, err
		}
		return d.finish(c, res, c.state != "")
	}
	done, err := d.enterParked(rq.r.Context(), true)
	if err != nil {
		return nil, err
	}
	call := mrtr.NewCall(rq.r.Context(), mrtr.NewID(), t.Backend.Name())
	if err := d.record(call); err != nil {
		done()
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	d.streams.Store(call.ID, ps)
	call.Start(func(ctx context.Context) (any, error) { return ps.rounds(ctx, call) }, func(bool) {
		d.streams.Delete(call.ID)
		d.parked.Remove(call.ID)
		done()
	})
	return d.drive(rq, req, t, c, call, counted(t.Backend.Name()))
}

// counted is the outcome recorder of a round whose backend request the
// call core counts itself (Do): errors name the backend.
func counted(backend string) func(error) error {
	return func(err error) error {
		if err == nil {
			return nil
		}
		return mcpmsg.WireError(backend, err)
	}
}

// rounds runs the call's backend requests: the first, then, while a
// Legacy backend's result still carries inputRequests (mrtr.MoreInput: a
// go-sdk server's next round), one more with the client's answers and the
// backend's requestState. call nil: the client cannot be asked; such a
// result is left to finish, which fails it.
func (ps *parkedStream) rounds(ctx context.Context, call *mrtr.Call) (any, error) {
	var in mcp.InputResponseMap
	var state string
	for n := 0; ; n++ {
		params, err := ps.c.backendParams(in, state)
		if err != nil {
			return nil, err
		}
		raw, err := ps.round(ctx, call, params)
		if err != nil {
			return nil, err
		}
		res, err := decodeResult(ps.c.method, raw)
		if err != nil {
			return nil, mcpmsg.WireError(ps.c.backend, err)
		}
		reqs, next := inputsOf(res)
		if call == nil || !mrtr.MoreInput(false, reqs) {
			return res, nil
		}
		if n >= mrtr.MaxRounds {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: backend %q: more than %d input rounds", ps.c.method, ps.c.backend, mrtr.MaxRounds)}
		}
		if in, err = call.AskAll(ctx, reqs); err != nil {
			return nil, err
		}
		state = next
	}
}

// round sends one backend request with params and reads its Stream to
// the result: notifications go to the client request waiting, asks to
// the client (ask).
func (ps *parkedStream) round(ctx context.Context, call *mrtr.Call, params json.RawMessage) (json.RawMessage, error) {
	req := ps.req
	req.Params = params
	st, err := ps.d.core.Do(ctx, &req)
	if err != nil {
		return nil, causeOf(ctx, err)
	}
	defer st.Close()
	actx, cancel := context.WithCancel(ctx) // the round's asks end with it
	defer cancel()
	for {
		m, err := st.Next(context.Background()) // the Stream ends with ctx
		switch {
		case err != nil:
			return nil, causeOf(ctx, err)
		case m.Kind == upstream.KindResult:
			return m.Result, nil
		case m.Kind == upstream.KindAsk:
			ps.ask(actx, call, st, m)
		default:
			ps.notify(m)
		}
	}
}

// causeOf is err, or why ctx ended when it has (the call was cancelled:
// shutdown, the park timeout, the client gone).
func causeOf(ctx context.Context, err error) error {
	if cause := context.Cause(ctx); cause != nil && !errors.Is(cause, context.Canceled) {
		return cause
	}
	return err
}

// ask hands the backend's request m to the client (call nil: it cannot
// be asked) and answers the backend on its own goroutine once the client
// did; a request the client did not declare, or beyond maxAsks, is
// answered with an error at once.
func (ps *parkedStream) ask(ctx context.Context, call *mrtr.Call, st *upstream.Stream, m upstream.Message) {
	if m.Method == "ping" {
		ps.answer(ctx, st, m.ID, json.RawMessage(`{}`), nil)
		return
	}
	ir, err := ps.inputRequest(call, m)
	if err == nil && ps.pending.Add(1) > maxAsks {
		ps.pending.Add(-1)
		err = fmt.Errorf("%s: more than %d requests wait on the client", m.Method, maxAsks)
	}
	if err != nil {
		ps.answer(ctx, st, m.ID, nil, err)
		return
	}
	go func() {
		defer ps.pending.Add(-1)
		resp, err := call.Ask(ctx, ir)
		var res json.RawMessage
		if err == nil {
			res, err = json.Marshal(resp)
		}
		ps.answer(ctx, st, m.ID, res, err)
	}()
}

// answer sends the backend the answer to its request id, unless the round
// has ended (its Stream tells the backend).
func (ps *parkedStream) answer(ctx context.Context, st *upstream.Stream, id, res json.RawMessage, err error) {
	if ctx.Err() != nil {
		return
	}
	if aerr := st.Answer(ctx, id, res, err); aerr != nil {
		ps.d.undeliverable("answer", ps.c.backend, aerr)
	}
}

// inputRequest is the backend's request m as the input request a Modern
// client answers, if the client declared its capability.
func (ps *parkedStream) inputRequest(call *mrtr.Call, m upstream.Message) (mcp.InputRequest, error) {
	declared := false
	switch c := ps.caps; m.Method {
	case "elicitation/create":
		declared = c != nil && c.Elicitation != nil
	case "sampling/createMessage":
		declared = c != nil && c.Sampling != nil
	case "roots/list":
		declared = c != nil && c.RootsV2 != nil
	default:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("%s is not served to a backend", m.Method)}
	}
	if !declared || call == nil {
		return nil, fmt.Errorf("%s: the client did not declare this capability", m.Method)
	}
	params := m.Params
	if len(params) == 0 || string(params) == "null" {
		params = json.RawMessage(`{}`)
	}
	one, err := json.Marshal(map[string]map[string]json.RawMessage{"r": {"method": json.RawMessage(`"` + m.Method + `"`), "params": params}})
	if err != nil {
		return nil, err
	}
	var reqs mcp.InputRequestMap // the go-sdk's decoding of each input request
	if err := json.Unmarshal(one, &reqs); err != nil || reqs["r"] == nil {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("%s: malformed params: %v", m.Method, err)}
	}
	return reqs["r"], nil
}

// notify delivers a notification of the backend's request to the client
// request waiting on the call: progress only under the token the call sent;
// with no request waiting (between rounds) it is dropped and counted.
func (ps *parkedStream) notify(m upstream.Message) {
	if m.Method == mcpmsg.MethodProgress {
		tok, err := mcpmsg.TokenOf(m.Params)
		if err != nil {
			ps.d.undeliverable(m.Method, ps.c.backend, err)
			return
		}
		if ps.token == "" || tok != ps.token {
			ps.d.undeliverable(m.Method, ps.c.backend, fmt.Errorf("not sent by the parked call: %w", ps.d.mgr.Tokens().Unmatched(tok)))
			return
		}
	}
	out := ps.out.Load()
	if out == nil {
		ps.d.undeliverable(m.Method, ps.c.backend, errors.New("no client request is waiting on the parked call"))
		return
	}
	out.deliver(m.Method, m.Params)
}

// backendParams are the params of c's request to a Legacy backend (no
// _meta): the backend's name or URI, the arguments, and on a go-sdk
// server's next round the client's answers and the backend's state.
func (c *mrtrCall) backendParams(in mcp.InputResponseMap, state string) (json.RawMessage, error) {
	p := struct {
		Name           string               `json:"name,omitempty"`
		URI            string               `json:"uri,omitempty"`
		Arguments      any                  `json:"arguments,omitempty"`
		InputResponses mcp.InputResponseMap `json:"inputResponses,omitempty"`
		RequestState   string               `json:"requestState,omitempty"`
	}{Arguments: c.args, InputResponses: in, RequestState: state}
	if c.method == "resources/read" {
		p.URI = c.target
	} else {
		p.Name = c.target
	}
	return json.Marshal(&p)
}

// decodeResult is a Legacy backend's raw result of method as the go-sdk's
// result type.
func decodeResult(method string, raw json.RawMessage) (any, error) {
	var res mcp.Result
	switch method {
	case "tools/call":
		res = new(mcp.CallToolResult)
	case "prompts/get":
		res = new(mcp.GetPromptResult)
	case "completion/complete":
		res = new(mcp.CompleteResult)
	default:
		res = new(mcp.ReadResourceResult)
	}
	if err := json.Unmarshal(raw, res); err != nil {
		return nil, fmt.Errorf("%s result: %w", method, err)
	}
	return res, nil
}

// completeDo serves a completion through Do, whatever its transport: a
// direct POST to a Modern HTTP backend (a per-principal one with the
// principal's token), a keyed session (a principal's, or to a Legacy HTTP
// backend), or a stdio or SSE backend's control connection. params are
// the backend's (its reference), meta the client's _meta.
func (d *Dispatcher) completeDo(rq *request, req *upstream.Request, t upstream.Target, params *mcp.CompleteParams, meta mcp.Meta) ([]byte, error) {
	c := &mrtrCall{method: "completion/complete", backend: t.Backend.Name()}
	d.newCallStream(rq, c.backend, meta)
	ps, err := d.newParkedStream(rq, req, t, c, meta)
	if err != nil {
		return nil, err
	}
	p := *params
	p.Meta = nil // Do sends meta
	body, err := json.Marshal(&p)
	if err != nil {
		return nil, err
	}
	raw, err := ps.round(rq.r.Context(), nil, body)
	if err != nil {
		return nil, err
	}
	res, err := decodeResult(c.method, raw)
	if err != nil {
		return nil, mcpmsg.WireError(c.backend, err)
	}
	return d.completed(res.(*mcp.CompleteResult))
}
