package modern

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/mrtr"
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
	// send performs the call on cs with the given _meta, inputResponses and
	// backend requestState and returns the SDK result.
	send func(ctx context.Context, cs *mcp.ClientSession, meta mcp.Meta, in mcp.InputResponseMap, state string) (any, error)
	// direct, if set, may serve the call without the SDK client on a Modern
	// backend (direct.go) with the backend requestState inner.
	direct func(rq *request, inner string) ([]byte, bool, error)
}

// callTool routes tools/call by the catalogue (or a retry's requestState);
// an unknown tool is -32602 naming it.
func (d *Dispatcher) callTool(rq *request, p *mcp.CallToolParamsRaw) ([]byte, error) {
	c := &mrtrCall{method: "tools/call", name: p.Name, meta: p.Meta, responses: p.InputResponses, state: p.RequestState}
	tool, route, found := d.agg.Current().Tool(p.Name)
	if found {
		c.backend, c.target = route.Backend, route.Name
	}
	c.send = func(ctx context.Context, cs *mcp.ClientSession, meta mcp.Meta, in mcp.InputResponseMap, state string) (any, error) {
		params := &mcp.CallToolParams{Meta: meta, Name: c.target, InputResponses: in, RequestState: state}
		if len(p.Arguments) > 0 {
			params.Arguments = p.Arguments
		}
		return cs.CallTool(ctx, params)
	}
	c.direct = func(rq *request, inner string) ([]byte, bool, error) {
		if !found || route.Backend != c.backend || route.Name != c.target {
			return nil, false, nil // the retry is pinned elsewhere than the catalogue says
		}
		q := *p
		q.RequestState = inner
		return d.callToolDirect(rq, tool, aggregator.Route{Backend: c.backend, Name: c.target}, &q)
	}
	return d.serveMRTR(rq, c, func() error { return invalidParams("unknown tool %q%s", p.Name, d.mgr.Unavailable()) })
}

// getPrompt routes prompts/get by advertised prompt name.
func (d *Dispatcher) getPrompt(rq *request, p *mcp.GetPromptParams) ([]byte, error) {
	c := &mrtrCall{method: "prompts/get", name: p.Name, meta: p.Meta, responses: p.InputResponses, state: p.RequestState}
	if _, route, ok := d.agg.Current().Prompt(p.Name); ok {
		c.backend, c.target = route.Backend, route.Name
	}
	c.send = func(ctx context.Context, cs *mcp.ClientSession, meta mcp.Meta, in mcp.InputResponseMap, state string) (any, error) {
		return cs.GetPrompt(ctx, &mcp.GetPromptParams{Meta: meta, Name: c.target, Arguments: p.Arguments, InputResponses: in, RequestState: state})
	}
	return d.serveMRTR(rq, c, func() error { return invalidParams("unknown prompt %q", p.Name) })
}

// readResource routes resources/read by URI (exact resource, else
// template); an unknown URI is the SDK's resource-not-found error (-32602).
func (d *Dispatcher) readResource(rq *request, p *mcp.ReadResourceParams) ([]byte, error) {
	c := &mrtrCall{method: "resources/read", name: p.URI, meta: p.Meta, responses: p.InputResponses, state: p.RequestState}
	if route, ok := d.agg.Current().Resource(p.URI); ok {
		c.backend, c.target = route.Backend, route.Name
	}
	c.send = func(ctx context.Context, cs *mcp.ClientSession, meta mcp.Meta, in mcp.InputResponseMap, state string) (any, error) {
		return cs.ReadResource(ctx, &mcp.ReadResourceParams{Meta: meta, URI: c.target, InputResponses: in, RequestState: state})
	}
	return d.serveMRTR(rq, c, func() error { return mcp.ResourceNotFoundError(p.URI) })
}

// serveMRTR serves c. A requestState vmcp issued is verified first (-32602
// if tampered, foreign or for another request): a parked call's is resumed,
// a Modern backend's pins the retry to that backend with its own state. A
// Legacy backend is called on a session with the client's capabilities
// when the client declared any it could ask for (park.go), else on the
// shared connection like a Modern backend.
func (d *Dispatcher) serveMRTR(rq *request, c *mrtrCall, unknown func() error) ([]byte, error) {
	retry := c.state != "" || c.responses != nil
	inner := ""
	if c.state != "" {
		st, err := d.state.Open(c.state)
		if err != nil {
			return nil, invalidParams("%s: %v", c.method, err)
		}
		if !st.Belongs(c.method, c.name) {
			return nil, invalidParams("%s: requestState was issued for another request", c.method)
		}
		if st.Parked {
			return d.resume(rq, c, st)
		}
		c.backend, c.target, inner = st.Backend, st.Target, st.Inner
	}
	if c.backend == "" {
		return nil, unknown()
	}
	b, cs, err := d.shared(c.backend)
	if err != nil {
		return nil, err
	}
	st := d.newCallStream(rq, c.backend, c.meta)
	r := cs.InitializeResult()
	modern := r != nil && r.ProtocolVersion >= FirstVersion
	if !modern {
		declared, _ := rq.clientCaps.(map[string]any)
		if caps, key, ok := parkCaps(declared); ok {
			return d.park(rq, b, c, caps, key)
		}
		c.responses, inner = nil, "" // a Legacy backend knows no multi round-trip
	} else if c.direct != nil {
		if out, handled, err := c.direct(rq, inner); handled {
			if err != nil {
				return nil, err
			}
			return d.sealRaw(c, out)
		}
	}
	res, err := d.callShared(rq, b, cs, c, st, modern, inner)
	if err != nil {
		return nil, backends.WireError(c.backend, err)
	}
	return d.finish(c, res, retry)
}

// callShared sends c on b's control connection cs, shared by every Modern
// client: the client's progressToken is replaced by one minted for this
// call, and what the backend sends during the call reaches st (by that
// token, by the call's context on HTTP, as b's only call over stdio).
func (d *Dispatcher) callShared(rq *request, b *backends.Backend, cs *mcp.ClientSession, c *mrtrCall, st *callStream, modern bool, inner string) (any, error) {
	ctx, done := backends.CallContext(backends.WithClientHeader(rq.r.Context(), rq.r.Header), b.Timeout())
	defer done()
	release := b.Attach(st, st.minted)
	defer release()
	meta := st.backendMeta(d.forwardMeta(rq, cs, c.meta), modern)
	return c.send(backends.WithSink(ctx, st), cs, meta, c.responses, inner)
}

// seal returns the requestState vmcp gives the client for a Modern
// backend's input_required result carrying the backend's state inner.
func (d *Dispatcher) seal(c *mrtrCall, inner string) string {
	return d.state.Seal(mrtr.State{Method: c.method, Name: c.name, Backend: c.backend, Target: c.target, Inner: inner})
}

// finish marshals a backend's result for the client: vmcp's _meta, the
// backend's requestState sealed into vmcp's, and for resources/read the
// backend's cache hint (never cacheable for a retry or an input_required).
func (d *Dispatcher) finish(c *mrtrCall, res any, retry bool) ([]byte, error) {
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
	params, backend, err := d.agg.Current().Completion(p)
	if err != nil {
		return nil, err
	}
	b, cs, err := d.shared(backend)
	if err != nil {
		return nil, err
	}
	ctx, done := backends.CallContext(backends.WithClientHeader(rq.r.Context(), rq.r.Header), b.Timeout())
	defer done()
	params.Meta = d.forwardMeta(rq, cs, p.Meta)
	res, err := cs.Complete(ctx, params)
	if err != nil {
		return nil, backends.WireError(backend, err)
	}
	out := *res
	out.ResultType = "complete"
	out.Meta = d.resultMeta(res.Meta)
	return json.Marshal(&out)
}

// shared returns backend name and its shared control connection.
func (d *Dispatcher) shared(name string) (*backends.Backend, *mcp.ClientSession, error) {
	b, err := d.mgr.Backend(name)
	if err != nil {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	cs, err := b.Shared()
	if err != nil {
		return nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	return b, cs, nil
}

// forwardMeta is the _meta sent to a backend: the client's keys without the
// reserved io.modelcontextprotocol/* ones, plus, for a Modern backend, the
// client's own clientCapabilities, so the SDK client does not inject vmcp's
// and the backend never sees a capability the client did not declare.
func (d *Dispatcher) forwardMeta(rq *request, cs *mcp.ClientSession, m mcp.Meta) mcp.Meta {
	out := backends.ForwardMeta(m)
	if r := cs.InitializeResult(); r == nil || r.ProtocolVersion < FirstVersion {
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
