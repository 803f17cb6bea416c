package legacy

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
)

// callTool routes tools/call by the routing table to the caller's own
// backend session and returns the backend's result unchanged.
func (d *Dispatcher) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	_, route, ok := d.agg.Current().Tool(req.Params.Name)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %q", req.Params.Name)}
	}
	res, err := forward(ctx, d, req.Session, req.Extra, route.Backend, req.Params.Meta,
		func(cctx context.Context, cs *mcp.ClientSession, meta mcp.Meta, in mcp.InputResponseMap, state string) (*mcp.CallToolResult, error) {
			return cs.CallTool(cctx, &mcp.CallToolParams{Meta: meta, Name: route.Name, Arguments: req.Params.Arguments, InputResponses: in, RequestState: state})
		},
		func(r *mcp.CallToolResult) (mcp.InputRequestMap, string) { return r.InputRequests, r.RequestState })
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Meta: backends.ForwardMeta(res.Meta), Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError}, nil
}

// readResource routes resources/read by URI (exact resource, else template).
func (d *Dispatcher) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	route, ok := d.agg.Current().Resource(req.Params.URI)
	if !ok {
		return nil, mcp.ResourceNotFoundError(req.Params.URI)
	}
	res, err := forward(ctx, d, req.Session, req.Extra, route.Backend, req.Params.Meta,
		func(cctx context.Context, cs *mcp.ClientSession, meta mcp.Meta, in mcp.InputResponseMap, state string) (*mcp.ReadResourceResult, error) {
			return cs.ReadResource(cctx, &mcp.ReadResourceParams{Meta: meta, URI: route.Name, InputResponses: in, RequestState: state})
		},
		func(r *mcp.ReadResourceResult) (mcp.InputRequestMap, string) { return r.InputRequests, r.RequestState })
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Meta: backends.ForwardMeta(res.Meta), Contents: res.Contents}, nil
}

// getPrompt routes prompts/get by advertised prompt name.
func (d *Dispatcher) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	_, route, ok := d.agg.Current().Prompt(req.Params.Name)
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %q", req.Params.Name)}
	}
	res, err := forward(ctx, d, req.Session, req.Extra, route.Backend, req.Params.Meta,
		func(cctx context.Context, cs *mcp.ClientSession, meta mcp.Meta, in mcp.InputResponseMap, state string) (*mcp.GetPromptResult, error) {
			return cs.GetPrompt(cctx, &mcp.GetPromptParams{Meta: meta, Name: route.Name, Arguments: req.Params.Arguments, InputResponses: in, RequestState: state})
		},
		func(r *mcp.GetPromptResult) (mcp.InputRequestMap, string) { return r.InputRequests, r.RequestState })
	if err != nil {
		return nil, err
	}
	return &mcp.GetPromptResult{Meta: backends.ForwardMeta(res.Meta), Description: res.Description, Messages: res.Messages}, nil
}

// forward sends one tools/call, resources/read or prompts/get over the
// caller's own backend session, drives multi round-trip rounds while the
// backend answers input_required, and names the backend in any error. The
// caller rebuilds the result for a Legacy client: no resultType, ttlMs or
// cacheScope (2026-07-28 only) and no reserved _meta keys of the backend.
func forward[R interface{ NeedsInput() bool }](ctx context.Context, d *Dispatcher, ss *mcp.ServerSession, extra *mcp.RequestExtra, backend string, meta mcp.Meta,
	send func(context.Context, *mcp.ClientSession, mcp.Meta, mcp.InputResponseMap, string) (R, error),
	inputs func(R) (mcp.InputRequestMap, string)) (R, error) {
	var zero R
	s, cs, cctx, done, err := d.begin(ctx, ss, extra, backend, meta)
	if err != nil {
		return zero, err
	}
	defer done()
	out := s.outMeta(cs, meta)
	res, err := send(cctx, cs, out, nil, "")
	if err == nil && res.NeedsInput() {
		res, err = rounds(ctx, s, backend, res, inputs, func(in mcp.InputResponseMap, state string) (R, error) {
			return send(cctx, cs, out, in, state)
		})
	}
	if err != nil {
		return zero, backends.WireError(backend, err)
	}
	return res, nil
}

// complete routes completion/complete by its reference: a prompt name or a
// resource (template) URI.
func (d *Dispatcher) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	params, backend, err := d.agg.Current().Completion(req.Params)
	if err != nil {
		return nil, err
	}
	cs, b, err := d.backendFor(ctx, req.Session, backend)
	if err != nil {
		return nil, err
	}
	cctx, done := backends.CallContext(ctx, b.Timeout())
	defer done()
	res, err := cs.Complete(cctx, params)
	if err != nil {
		return nil, backends.WireError(backend, err)
	}
	return res, nil
}

// subscribe forwards resources/subscribe over the caller's own backend
// session to the backend that serves the URI.
func (d *Dispatcher) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	return d.subscription(ctx, req.Session, req.Params.URI, true)
}

// unsubscribe forwards resources/unsubscribe like subscribe.
func (d *Dispatcher) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	return d.subscription(ctx, req.Session, req.Params.URI, false)
}

func (d *Dispatcher) subscription(ctx context.Context, ss *mcp.ServerSession, uri string, on bool) error {
	route, ok := d.agg.Current().Resource(uri)
	if !ok {
		return mcp.ResourceNotFoundError(uri)
	}
	cs, _, err := d.backendFor(ctx, ss, route.Backend)
	if err != nil {
		return err
	}
	if on {
		err = cs.Subscribe(ctx, &mcp.SubscribeParams{URI: route.Name})
	} else {
		err = cs.Unsubscribe(ctx, &mcp.UnsubscribeParams{URI: route.Name})
	}
	if err != nil {
		return backends.WireError(route.Backend, err)
	}
	return nil
}

// begin prepares one forwarded request: the caller's backend session and
// the backend call's context, registered as an in-flight call so progress
// and server-to-client requests find their way back to this request.
func (d *Dispatcher) begin(ctx context.Context, ss *mcp.ServerSession, extra *mcp.RequestExtra, backend string, meta mcp.Meta) (*clientSession, *mcp.ClientSession, context.Context, func(), error) {
	s, err := d.session(ss)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	cs, b, err := s.backend(ctx, backend)
	if err != nil {
		return nil, nil, nil, nil, backends.WireError(backend, err)
	}
	c, end := s.calls.start(ctx, backend, meta)
	if extra != nil {
		ctx = backends.WithClientHeader(ctx, extra.Header)
	}
	ctx, unbind := s.bound(ctx) // a deleted session cancels its backend calls
	cctx, done := backends.CallContext(withCall(ctx, c), b.Timeout())
	return s, cs, cctx, func() {
		if cctx.Err() != nil { // cancelled or timed out: the SDK is sending notifications/cancelled
			s.noteCancelled()
		}
		end()
		done()
		unbind()
	}, nil
}

// backendFor returns the caller's backend session for backend name; errors
// are JSON-RPC errors naming the backend.
func (d *Dispatcher) backendFor(ctx context.Context, ss *mcp.ServerSession, name string) (*mcp.ClientSession, *backends.Backend, error) {
	s, err := d.session(ss)
	if err != nil {
		return nil, nil, err
	}
	cs, b, err := s.backend(ctx, name)
	if err != nil {
		return nil, nil, backends.WireError(name, err)
	}
	return cs, b, nil
}
