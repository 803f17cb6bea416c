package modern

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/mrtr"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// mrtrCall is one tools/call, prompts/get or resources/read: the requests
// that may answer input_required (2026-07-28 multi round-trip requests).
type mrtrCall struct {
	method    string               // tools/call, prompts/get or resources/read
	name      string               // advertised tool or prompt name, or URI
	backend   string               // routed backend ("" unknown)
	target    string               // the backend's own name or URI
	meta      mcp.Meta             // the client's _meta
	responses mcp.InputResponseMap // the client's inputResponses
	state     string               // the client's requestState
	principal identity.Principal   // who asked: the requestState vmcp mints is bound to it
	args      any                  // the arguments a Legacy backend gets (nil: none; park_stream.go)
	// send performs the call on cs with the given _meta, inputResponses and
	// backend requestState and returns the SDK result.
	send func(ctx context.Context, cs *mcp.ClientSession, meta mcp.Meta, in mcp.InputResponseMap, state string) (any, error)
	// direct, if set, serves the call through the call core's sender when
	// it routes it ViaDirect (direct.go), with the backend requestState inner.
	direct func(rq *request, req *upstream.Request, t upstream.Target, inner string) ([]byte, error)
}

// callTool routes tools/call through the call core (or a retry's
// requestState); an unknown tool is -32602 naming it.
func (d *Dispatcher) callTool(rq *request, p *callParams) ([]byte, error) {
	if res, ok, err := d.core.CallOwn(rq.r.Context(), d.upstreamRequest(rq, "tools/call", p.Name), p.Arguments); ok {
		if err != nil {
			return nil, err
		}
		out := *res
		out.Meta = d.resultMeta(res.Meta)
		return marshalMRTR(&out, false) // vmcp's own tool (tool search)
	}
	c := &mrtrCall{method: "tools/call", name: p.Name, meta: p.Meta, responses: p.InputResponses, state: p.RequestState, args: p.Arguments}
	if len(p.Arguments) == 0 {
		c.args = emptyObject
	}
	c.send = func(ctx context.Context, cs *mcp.ClientSession, meta mcp.Meta, in mcp.InputResponseMap, state string) (any, error) {
		params := &mcp.CallToolParams{Meta: meta, Name: c.target, InputResponses: in, RequestState: state}
		if len(p.Arguments) > 0 {
			params.Arguments = p.Arguments
		}
		return cs.CallTool(ctx, params)
	}
	c.direct = func(rq *request, req *upstream.Request, t upstream.Target, inner string) ([]byte, error) {
		q := *p
		q.RequestState = inner
		return d.callToolDirect(rq, req, t, &q)
	}
	return d.serveMRTR(rq, c)
}

// getPrompt routes prompts/get by advertised prompt name.
func (d *Dispatcher) getPrompt(rq *request, p *mcp.GetPromptParams) ([]byte, error) {
	c := &mrtrCall{method: "prompts/get", name: p.Name, meta: p.Meta, responses: p.InputResponses, state: p.RequestState}
	if p.Arguments != nil {
		c.args = p.Arguments
	}
	c.send = func(ctx context.Context, cs *mcp.ClientSession, meta mcp.Meta, in mcp.InputResponseMap, state string) (any, error) {
		return cs.GetPrompt(ctx, &mcp.GetPromptParams{Meta: meta, Name: c.target, Arguments: p.Arguments, InputResponses: in, RequestState: state})
	}
	return d.serveMRTR(rq, c)
}

// readResource routes resources/read by URI (exact resource, else
// template); an unknown URI is the SDK's resource-not-found error (-32602).
func (d *Dispatcher) readResource(rq *request, p *mcp.ReadResourceParams) ([]byte, error) {
	c := &mrtrCall{method: "resources/read", name: p.URI, meta: p.Meta, responses: p.InputResponses, state: p.RequestState}
	c.send = func(ctx context.Context, cs *mcp.ClientSession, meta mcp.Meta, in mcp.InputResponseMap, state string) (any, error) {
		return cs.ReadResource(ctx, &mcp.ReadResourceParams{Meta: meta, URI: c.target, InputResponses: in, RequestState: state})
	}
	return d.serveMRTR(rq, c)
}

// upstreamRequest is the call core's view of rq for method and name.
func (d *Dispatcher) upstreamRequest(rq *request, method, name string) *upstream.Request {
	_, _, asks := parkCaps(rq.clientCaps)
	return &upstream.Request{Method: method, Name: name, Revision: upstream.RevisionModern,
		Principal: identity.From(rq.r.Context()), Header: rq.r.Header, Asks: asks}
}

// serveMRTR serves c through the call core. A requestState vmcp issued is
// verified first (-32602 if tampered, foreign or for another request): a
// parked call's is resumed, a Modern backend's pins the retry to that
// backend with its own state. The core's transport decides the rest: a
// direct POST to a Modern HTTP backend; Do on a keyed session (any other
// backend the client can be asked through or has a principal for, and
// every Legacy HTTP one), parked while it asks the client
// (park_stream.go); else the backend's shared control connection.
func (d *Dispatcher) serveMRTR(rq *request, c *mrtrCall) ([]byte, error) {
	retry := c.state != "" || c.responses != nil
	req := d.upstreamRequest(rq, c.method, c.name)
	c.principal = req.Principal
	t, inner, resumed, out, err := d.resolve(rq, c, req)
	if resumed || err != nil {
		return out, err
	}
	c.backend, c.target = t.Backend.Name(), t.Name
	st := d.newCallStream(rq, c.backend, c.meta)
	switch t.Via {
	case upstream.ViaKeyed:
		return d.parkStream(rq, req, t, c)
	case upstream.ViaDirect:
		if c.direct != nil {
			out, err := c.direct(rq, req, t, inner)
			if err != nil {
				return nil, err
			}
			return d.sealRaw(c, out)
		}
	}
	return d.serveShared(rq, req, t, c, st, inner, retry)
}

// resolve finds c's target: routed for a first call; for a retry, pinned
// by the requestState vmcp issued (-32602 if tampered, foreign or for
// another request), whose Modern backend's own state is inner; a parked
// call's retry is resumed instead (resumed, with its out and err).
func (d *Dispatcher) resolve(rq *request, c *mrtrCall, req *upstream.Request) (t upstream.Target, inner string, resumed bool, out []byte, err error) {
	if c.state == "" {
		t, err = d.core.Route(req)
		return t, "", false, nil, err
	}
	st, err := d.state.OpenFor(c.state, req.Principal)
	if err != nil {
		return t, "", false, nil, invalidParams("%s: %v", c.method, err)
	}
	if !st.Belongs(c.method, c.name) {
		return t, "", false, nil, invalidParams("%s: requestState was issued for another request", c.method)
	}
	if st.Parked {
		out, err = d.resume(rq, c, st)
		return t, "", true, out, err
	}
	t, err = d.core.Pin(req, st.Backend, st.Target, d.pinnedTool(c, st))
	return t, st.Inner, false, nil, err
}

// serveShared serves c on t's backend's control connection. A request the
// backend no longer knows the session of (it restarted: not processed) is
// sent once more on the next control connection.
func (d *Dispatcher) serveShared(rq *request, req *upstream.Request, t upstream.Target, c *mrtrCall, st *callStream, inner string, retry bool) ([]byte, error) {
	cs, err := t.Backend.Shared()
	if err != nil {
		return nil, d.core.Start(req, t)(err)
	}
	modern := t.Backend.Modern()
	if !modern {
		c.responses, inner = nil, "" // a Legacy backend knows no multi round-trip
	}
	res, err := upstream.Call(d.core, rq.r.Context(), req, t, func(ctx context.Context) (any, error) {
		res, err := d.callShared(ctx, rq, t.Backend, cs, c, st, modern, inner)
		if err != nil && ctx.Err() == nil && backends.SessionForgotten(err) {
			if cs, err = t.Backend.Renewed(ctx, cs); err != nil {
				return nil, err
			}
			return d.callShared(ctx, rq, t.Backend, cs, c, st, modern, inner)
		}
		return res, err
	})
	if err != nil {
		return nil, err
	}
	return d.finish(c, res, retry)
}

// callShared sends c on b's control connection cs, shared by every Modern
// client, under the call core's ctx: the client's progressToken is
// replaced by one minted for this call, and what the backend sends during
// the call reaches st (by that token, by the call's context on HTTP, as
// b's only call over stdio).
func (d *Dispatcher) callShared(ctx context.Context, rq *request, b *backends.Backend, cs *mcp.ClientSession, c *mrtrCall, st *callStream, modern bool, inner string) (any, error) {
	release := b.Attach(st, st.minted)
	defer release()
	meta := st.backendMeta(d.forwardMeta(rq, cs, c.meta), modern)
	tracing.RewriteMeta(ctx, meta) // a client's _meta.traceparent names vmcp's backend span instead
	return c.send(backends.WithSink(ctx, st), cs, meta, c.responses, inner)
}

// pinnedTool is the catalogue's tool for a tools/call retry pinned to the
// backend and tool the catalogue still routes it to (nil otherwise, so the
// retry takes the SDK path).
func (d *Dispatcher) pinnedTool(c *mrtrCall, st mrtr.State) *mcp.Tool {
	if c.method != "tools/call" {
		return nil
	}
	tool, rt, ok := d.agg.For(c.principal.Key()).Tool(c.name)
	if !ok || rt.Backend != st.Backend || rt.Name != st.Target {
		return nil
	}
	return tool
}

// seal returns the requestState vmcp gives the client for a Modern
// backend's input_required result carrying the backend's state inner.
func (d *Dispatcher) seal(c *mrtrCall, inner string) string {
	return d.state.Seal(mrtr.State{Method: c.method, Name: c.name, Backend: c.backend, Target: c.target, Inner: inner}.For(c.principal))
}

// finish marshals a backend's result for the client: vmcp's _meta, the
// backend's requestState sealed into vmcp's, and for resources/read the
// backend's cache hint (never cacheable for a retry or an input_required).
func (d *Dispatcher) finish(c *mrtrCall, res any, retry bool) ([]byte, error) {
	if reqs, _ := inputsOf(res); len(reqs) > 0 && !needsInput(res) {
		// A Legacy backend's leftover round (mrtr.MoreInput) on a call that
		// cannot ask the client: never a complete result with inputRequests.
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: backend %q asks for input this call cannot ask the client for (declare elicitation, sampling or roots)", c.method, c.backend)}
	}
	switch r := res.(type) {
	case *mcp.CallToolResult:
		out := *r
		out.Meta = d.resultMeta(r.Meta)
		if r.NeedsInput() {
			out.RequestState = d.seal(c, r.RequestState)
		}
		return marshalMRTR(&out, r.NeedsInput())
	case *mcp.GetPromptResult:
		out := *r
		out.Meta = d.resultMeta(r.Meta)
		if r.NeedsInput() {
			out.RequestState = d.seal(c, r.RequestState)
		}
		return marshalMRTR(&out, r.NeedsInput())
	case *mcp.ReadResourceResult:
		out := *r // r may be an SDK client's cached value: never mutate it
		out.Meta = d.resultMeta(r.Meta)
		hint := backends.HintOf(r.Cacheable, r.Meta)
		if retry || r.NeedsInput() {
			hint.TTLMs = 0 // 2026-07-28 caching: MRTR retries are not cached
		}
		out.Cacheable = hint.Cacheable()
		if r.NeedsInput() {
			out.RequestState = d.seal(c, r.RequestState)
		}
		return marshalMRTR(&out, r.NeedsInput())
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("%s: unexpected result %T", c.method, res)}
}

// needsInput reports whether res is an input_required result.
func needsInput(res any) bool {
	r, ok := res.(interface{ NeedsInput() bool })
	return ok && r.NeedsInput()
}

// sealRaw seals the backend requestState of a raw input_required result
// (the direct path); other results pass unchanged.
func (d *Dispatcher) sealRaw(c *mrtrCall, out []byte) ([]byte, error) {
	if !bytes.Contains(out, []byte(`"input_required"`)) {
		return out, nil
	}
	var res map[string]json.RawMessage
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, backends.WireError(c.backend, err)
	}
	var rt, inner string
	if json.Unmarshal(res["resultType"], &rt) != nil || rt != "input_required" {
		return out, nil
	}
	_ = json.Unmarshal(res["requestState"], &inner)
	st, err := json.Marshal(d.seal(c, inner))
	if err != nil {
		return nil, err
	}
	res["requestState"] = st
	return json.Marshal(res)
}

// complete routes completion/complete by its reference (prompt name or
// resource URI/template); an unknown reference is -32602.
func (d *Dispatcher) complete(rq *request, p *mcp.CompleteParams) ([]byte, error) {
	params, backend, err := d.agg.For(identity.From(rq.r.Context()).Key()).Completion(p)
	if err != nil {
		return nil, err
	}
	req := d.upstreamRequest(rq, "completion/complete", "")
	t, err := d.core.Pin(req, backend, "", nil)
	if err != nil {
		return nil, err
	}
	if t.Via == upstream.ViaKeyed {
		return d.completeKeyed(rq, req, t, params, p.Meta)
	}
	res, err := upstream.Call(d.core, rq.r.Context(), req, t, func(ctx context.Context) (*mcp.CompleteResult, error) {
		cs, err := t.Backend.Shared()
		if err != nil {
			return nil, err
		}
		params.Meta = d.forwardMeta(rq, cs, p.Meta)
		return cs.Complete(ctx, params)
	})
	if err != nil {
		return nil, err
	}
	return d.completed(res)
}

// completed is a backend's completion result as vmcp answers it.
func (d *Dispatcher) completed(res *mcp.CompleteResult) ([]byte, error) {
	out := *res
	out.ResultType = "complete"
	out.Meta = d.resultMeta(res.Meta)
	return json.Marshal(&out)
}

// forwardMeta is the _meta sent to a backend: the client's keys without the
// reserved io.modelcontextprotocol/* ones, plus, for a Modern backend, the
// client's own clientCapabilities, so the SDK client does not inject vmcp's
// and the backend never sees a capability the client did not declare.
func (d *Dispatcher) forwardMeta(rq *request, cs *mcp.ClientSession, m mcp.Meta) mcp.Meta {
	out := backends.ForwardMeta(m)
	if r := cs.InitializeResult(); r == nil || !wire.IsModern(r.ProtocolVersion) {
		return out
	}
	if out == nil {
		out = make(mcp.Meta, 3) // the SDK adds protocolVersion and clientInfo
	}
	out[mcp.MetaKeyClientCapabilities] = rq.clientCaps
	return out
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}
