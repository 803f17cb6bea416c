package modern

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/mrtr"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
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
	args      any                  // the arguments the backend gets (nil: none; park_stream.go)
	// direct, if set, serves the call when the core routes it ViaDirect
	// (a tools/call: direct.go's raw path), with the backend requestState
	// inner.
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
	return d.serveMRTR(rq, c)
}

// readResource routes resources/read by URI (exact resource, else
// template); an unknown URI is the SDK's resource-not-found error (-32602).
func (d *Dispatcher) readResource(rq *request, p *mcp.ReadResourceParams) ([]byte, error) {
	return d.serveMRTR(rq, &mrtrCall{method: "resources/read", name: p.URI, meta: p.Meta, responses: p.InputResponses, state: p.RequestState})
}

// upstreamRequest is the call core's view of rq for method and name.
func (d *Dispatcher) upstreamRequest(rq *request, method, name string) *upstream.Request {
	_, _, asks := parkCaps(rq.clientCaps)
	return &upstream.Request{Method: method, Name: name, Revision: upstream.RevisionModern,
		Principal: identity.From(rq.r.Context()), Header: rq.r.Header, Asks: asks}
}

// serveMRTR serves c through the call core's one sender (Do). A
// requestState vmcp issued is verified first (-32602 if tampered, foreign
// or for another request): a parked call's is resumed, a Modern backend's
// pins the retry to that backend with its own state. The core's transport
// decides the rest: a call, get or read on a keyed session (any backend
// but Modern HTTP the client can be asked through or has a principal
// for, and every Legacy HTTP one) is parked while it asks the client
// (park_stream.go); a tools/call to a Modern HTTP backend takes the raw
// path (direct.go); anything else is one request through Do (serveDo).
func (d *Dispatcher) serveMRTR(rq *request, c *mrtrCall) ([]byte, error) {
	retry := c.state != "" || c.responses != nil
	req := d.upstreamRequest(rq, c.method, c.name)
	c.principal = req.Principal
	t, inner, resumed, out, err := d.resolve(rq, c, req)
	if resumed || err != nil {
		return out, err
	}
	c.backend, c.target = t.Backend.Name(), t.Name
	d.newCallStream(rq, c.backend, c.meta)
	switch {
	case t.Via == upstream.ViaKeyed:
		return d.parkStream(rq, req, t, c)
	case t.Via == upstream.ViaDirect && c.direct != nil:
		out, err := c.direct(rq, req, t, inner)
		if err != nil {
			return nil, err
		}
		return d.sealRaw(c, out)
	}
	return d.serveDo(rq, req, t, c, inner, retry)
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

// serveDo serves c, routed ViaDirect (a Modern HTTP backend) or
// ViaShared (the control connection of a stdio or SSE backend), as one
// request through Do: a Modern backend gets the client's inputResponses
// and its own requestState inner (the retry of its input_required, which
// finish seals into vmcp's), a Legacy one neither (it knows no multi
// round-trip). Progress and logs reach the client's stream as they are
// read; an ask is refused to the backend (this client cannot be asked).
func (d *Dispatcher) serveDo(rq *request, req *upstream.Request, t upstream.Target, c *mrtrCall, inner string, retry bool) ([]byte, error) {
	ps, err := d.newParkedStream(rq, req, t, c, c.meta)
	if err != nil {
		return nil, err
	}
	in := c.responses
	if !t.Backend.Modern() {
		in, inner = nil, ""
	}
	params, err := c.backendParams(in, inner)
	if err != nil {
		return nil, err
	}
	raw, err := ps.round(rq.r.Context(), nil, params)
	if err != nil {
		return nil, err
	}
	res, err := decodeResult(c.method, raw)
	if err != nil {
		return nil, mcpmsg.WireError(c.backend, err)
	}
	return d.finish(c, res, retry)
}

// pinnedTool is the catalogue's tool for a tools/call retry pinned to the
// backend and tool the catalogue still routes it to (nil otherwise: the
// retry goes without the tool's Mcp-Param-* headers, and a backend that
// requires them refuses it).
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
		out := *r
		out.Meta = d.resultMeta(r.Meta)
		hint := mcpmsg.HintOf(r.Cacheable, r.Meta)
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
		return nil, mcpmsg.WireError(c.backend, err)
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
	return d.completeDo(rq, req, t, params, p.Meta)
}

// completed is a backend's completion result as vmcp answers it.
func (d *Dispatcher) completed(res *mcp.CompleteResult) ([]byte, error) {
	out := *res
	out.ResultType = "complete"
	out.Meta = d.resultMeta(res.Meta)
	return json.Marshal(&out)
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}
