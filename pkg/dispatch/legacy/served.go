package legacy

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/audit"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// A tools/call, prompts/get or resources/read the relay does not take (one
// in a 2025-03-26 JSON-RPC batch; a name the relay could not resolve,
// which fails here as it would there; a tool only the principal's own
// catalogue has, when batched) reaches the go-sdk server's handlers below.
// They send it as the relay does: through upstream.Core.Do on the
// client's own backend session, round after round (runCall), with its
// progress, elicitation/complete and asks on the request's own stream,
// written through the go-sdk session (sdkOut).

// callTool serves tools/call for the go-sdk server: vmcp's own tools
// (tool search) here, any other through Do.
func (d *Dispatcher) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	s, err := d.session(req.Session)
	if err != nil {
		return nil, err
	}
	if res, ok, err := d.core.CallOwn(ctx, s.request(req.Extra, "tools/call", req.Params.Name), req.Params.Arguments); ok {
		return res, err
	}
	var out mcp.CallToolResult
	if err := d.serve(ctx, s, req.Extra, "tools/call", req.Params.Name, req.Params, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// readResource serves resources/read (by URI: exact resource, else
// template) for the go-sdk server.
func (d *Dispatcher) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	s, err := d.session(req.Session)
	if err != nil {
		return nil, err
	}
	var out mcp.ReadResourceResult
	if err := d.serve(ctx, s, req.Extra, "resources/read", req.Params.URI, req.Params, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// getPrompt serves prompts/get for the go-sdk server.
func (d *Dispatcher) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	s, err := d.session(req.Session)
	if err != nil {
		return nil, err
	}
	var out mcp.GetPromptResult
	if err := d.serve(ctx, s, req.Extra, "prompts/get", req.Params.Name, req.Params, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// serve routes one tools/call, prompts/get or resources/read of session s
// (params as the go-sdk decoded them; name the advertised name or URI),
// sends it through upstream.Core.Do like the relay and decodes the
// backend's result, made fit for a Legacy client, into out. The go-sdk
// cancels ctx when the client cancels the request or its session ends.
func (d *Dispatcher) serve(ctx context.Context, s *clientSession, extra *mcp.RequestExtra, method, name string, params, out any) (err error) {
	req := s.request(extra, method, name)
	m, x := tracing.Member{Method: method, Name: name}, d.opts.Exchanges.Lookup(req.Header)
	req.Decided = func(dec audit.Decision) { m.Decision = dec }
	defer d.member(ctx, x, &m, params, time.Now(), &err)
	t, err := d.core.Route(req)
	if err != nil {
		return err
	}
	m.Backend = t.Backend.Name()
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	p, err := wire.DecodeObject(raw)
	if err != nil {
		return err
	}
	dropRoundState(p)
	p[relayMethods[method]] = wire.AppendString(nil, t.Name)
	s.prepare(req, t, p)
	cctx, _, stop := s.callContext(ctx, errClientCancelled)
	defer stop()
	res, err := s.runCall(cctx, req, p, sdkOut{ctx: ctx, s: s})
	if err != nil {
		return err
	}
	if err := json.Unmarshal(legacyResult(res), out); err != nil {
		return mcpmsg.WireError(t.Backend.Name(), fmt.Errorf("malformed %s result: %w", method, err))
	}
	return nil
}

// member reports m, a request the go-sdk server served (one of a
// 2025-03-26 batch: its own audit record), to its Exchange x (taken while
// the HTTP request was served) once it ended with *err: its outcome,
// duration and arguments.
func (d *Dispatcher) member(ctx context.Context, x *tracing.Exchange, m *tracing.Member, params any, start time.Time, err *error) {
	if x == nil {
		return
	}
	m.Duration = time.Since(start)
	var je *jsonrpc.Error
	switch {
	case ctx.Err() != nil:
		m.Outcome = audit.Outcome{Cancelled: true}
	case errors.As(*err, &je):
		m.Outcome = audit.Outcome{Code: je.Code}
	case *err != nil:
		m.Outcome = audit.Outcome{Code: jsonrpc.CodeInternalError}
	}
	switch p := params.(type) {
	case *mcp.CallToolParamsRaw:
		m.Arguments = p.Arguments
	case *mcp.GetPromptParams:
		m.Arguments, _ = json.Marshal(p.Arguments)
	}
	if m.Backend == "" {
		m.Backend = m.Decision.Backend
	}
	x.AddMember(*m)
}

// prepare fills in what Do sends for req, routed to t, on this session's
// own backend sessions: the target, the client's _meta (reserved keys
// dropped; taken out of params), its capabilities and its log level.
func (s *clientSession) prepare(req *upstream.Request, t upstream.Target, params map[string]json.RawMessage) {
	s.mu.Lock()
	level := s.logLevel
	s.mu.Unlock()
	req.Target, req.Sessions = &t, s.backends
	req.Meta, req.Caps, req.LogLevel = mcpmsg.ForwardMetaRaw(params["_meta"]), s.capabilitiesRaw(), string(level)
	delete(params, "_meta")
}

// sdkOut is the stream of a request the go-sdk server serves
// (clientStream): messages go through the client's go-sdk session with
// the request's context, which puts them on that request's stream.
type sdkOut struct {
	ctx context.Context // the go-sdk handler's
	s   *clientSession
}

// send writes progress or elicitation/complete (msg, a whole
// notification) on the request's stream.
func (o sdkOut) send(msg []byte) error {
	var m wire.Message
	if err := wire.Decode(msg, &m); err != nil {
		return err
	}
	switch m.Method {
	case "notifications/progress":
		var p mcp.ProgressNotificationParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return err
		}
		return o.s.front.NotifyProgress(o.ctx, &p)
	case "notifications/elicitation/complete":
		var p mcp.ElicitationCompleteParams
		if err := json.Unmarshal(m.Params, &p); err != nil {
			return err
		}
		return o.s.front.NotifyElicitationComplete(o.ctx, &p)
	}
	return fmt.Errorf("vmcp does not relay %s on a call's stream", m.Method)
}

// request asks the client method (params) through the go-sdk session on
// the request's stream (ctx carries the request's values) and returns its
// raw answer, or its error as a *jsonrpc.Error.
func (o sdkOut) request(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	var res any
	var err error
	switch method {
	case "elicitation/create":
		var p mcp.ElicitParams
		if err = decodeParams(params, &p); err == nil {
			res, err = o.s.front.Elicit(ctx, &p)
		}
	case "sampling/createMessage":
		var p mcp.CreateMessageWithToolsParams
		if err = decodeParams(params, &p); err == nil {
			res, err = o.s.front.CreateMessageWithTools(ctx, &p)
		}
	case "roots/list":
		var p mcp.ListRootsParams
		if err = decodeParams(params, &p); err == nil {
			res, err = o.s.front.ListRoots(ctx, &p)
		}
	case "ping":
		res, err = struct{}{}, o.s.front.Ping(ctx, nil)
	default:
		return nil, o.s.undeclaredMethod(method)
	}
	var we *jsonrpc.Error
	switch {
	case errors.As(err, &we):
		return nil, we
	case err != nil:
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return json.Marshal(res)
}

// decodeParams decodes a server-to-client request's params (none: zero).
func decodeParams(params json.RawMessage, p any) error {
	if len(params) == 0 || string(params) == "null" {
		return nil
	}
	if err := json.Unmarshal(params, p); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
	}
	return nil
}
