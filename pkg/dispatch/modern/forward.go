package modern

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
)

// callTool routes tools/call by the catalogue to the backend's shared
// connection; an unknown tool is -32602 naming it.
func (d *Dispatcher) callTool(rq *request, p *mcp.CallToolParamsRaw) ([]byte, error) {
	_, route, ok := d.agg.Current().Tool(p.Name)
	if !ok {
		return nil, invalidParams("unknown tool %q", p.Name)
	}
	cs, ctx, done, err := d.backend(rq, route.Backend)
	if err != nil {
		return nil, err
	}
	defer done()
	params := &mcp.CallToolParams{
		Meta:           d.forwardMeta(rq, cs, p.Meta),
		Name:           route.Name,
		InputResponses: p.InputResponses,
		RequestState:   p.RequestState,
	}
	if len(p.Arguments) > 0 {
		params.Arguments = p.Arguments
	}
	res, err := cs.CallTool(ctx, params)
	if err != nil {
		return nil, backends.WireError(route.Backend, err)
	}
	out := *res
	out.Meta = d.resultMeta(res.Meta)
	return marshalMRTR(&out, res.NeedsInput())
}

// getPrompt routes prompts/get by advertised prompt name.
func (d *Dispatcher) getPrompt(rq *request, p *mcp.GetPromptParams) ([]byte, error) {
	_, route, ok := d.agg.Current().Prompt(p.Name)
	if !ok {
		return nil, invalidParams("unknown prompt %q", p.Name)
	}
	cs, ctx, done, err := d.backend(rq, route.Backend)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{
		Meta:           d.forwardMeta(rq, cs, p.Meta),
		Name:           route.Name,
		Arguments:      p.Arguments,
		InputResponses: p.InputResponses,
		RequestState:   p.RequestState,
	})
	if err != nil {
		return nil, backends.WireError(route.Backend, err)
	}
	out := *res
	out.Meta = d.resultMeta(res.Meta)
	return marshalMRTR(&out, res.NeedsInput())
}

// readResource routes resources/read by URI (exact resource, else
// template); an unknown URI is the SDK's resource-not-found error (-32602).
func (d *Dispatcher) readResource(rq *request, p *mcp.ReadResourceParams) ([]byte, error) {
	route, ok := d.agg.Current().Resource(p.URI)
	if !ok {
		return nil, mcp.ResourceNotFoundError(p.URI)
	}
	cs, ctx, done, err := d.backend(rq, route.Backend)
	if err != nil {
		return nil, err
	}
	defer done()
	res, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{
		Meta:           d.forwardMeta(rq, cs, p.Meta),
		URI:            route.Name,
		InputResponses: p.InputResponses,
		RequestState:   p.RequestState,
	})
	if err != nil {
		return nil, backends.WireError(route.Backend, err)
	}
	out := *res // res may be the SDK client's cached value: never mutate it
	out.Meta = d.resultMeta(res.Meta)
	out.Cacheable.CacheScope = cacheScope(res.CacheScope)
	return marshalMRTR(&out, res.NeedsInput())
}

// complete routes completion/complete by its reference (prompt name or
// resource URI/template); an unknown reference is -32602.
func (d *Dispatcher) complete(rq *request, p *mcp.CompleteParams) ([]byte, error) {
	params, backend, err := d.agg.Current().Completion(p)
	if err != nil {
		return nil, err
	}
	cs, ctx, done, err := d.backend(rq, backend)
	if err != nil {
		return nil, err
	}
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

// backend returns the shared connection of backend name and the context of
// one call on it (bounded by the backend's timeout, cancelled with the
// client's request); done must be called when the call returns.
func (d *Dispatcher) backend(rq *request, name string) (*mcp.ClientSession, context.Context, func(), error) {
	b, err := d.mgr.Backend(name)
	if err != nil {
		return nil, nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	cs, err := b.Shared()
	if err != nil {
		return nil, nil, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	ctx, done := backends.CallContext(backends.WithClientHeader(rq.r.Context(), rq.r.Header), b.Timeout())
	return cs, ctx, done, nil
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

// cacheScope is the cacheScope sent to clients: the backend's, "public"
// when absent (its protocol default).
func cacheScope(s string) string {
	if s == "" {
		return "public"
	}
	return s
}

func invalidParams(format string, args ...any) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf(format, args...)}
}
