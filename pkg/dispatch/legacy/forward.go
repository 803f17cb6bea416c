package legacy

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// callTool routes tools/call through the call core to the caller's own
// backend session and returns the backend's result made fit for a Legacy
// client.
func (d *Dispatcher) callTool(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	if s, err := d.session(req.Session); err == nil {
		if res, ok, err := d.core.CallOwn(ctx, s.request(req.Extra, "tools/call", req.Params.Name), req.Params.Arguments); ok {
			return res, err // vmcp's own tool (tool search)
		}
	}
	res, err := forward(ctx, d, req.Session, req.Extra, "tools/call", req.Params.Name, req.Params.Meta,
		func(cctx context.Context, cs *mcp.ClientSession, t upstream.Target, meta mcp.Meta, in mcp.InputResponseMap, state string) (*mcp.CallToolResult, error) {
			return cs.CallTool(cctx, &mcp.CallToolParams{Meta: meta, Name: t.Name, Arguments: req.Params.Arguments, InputResponses: in, RequestState: state})
		},
		func(r *mcp.CallToolResult) (mcp.InputRequestMap, string) { return r.InputRequests, r.RequestState })
	if err != nil {
		return nil, err
	}
	return &mcp.CallToolResult{Meta: backends.ForwardMeta(res.Meta), Content: res.Content, StructuredContent: res.StructuredContent, IsError: res.IsError}, nil
}

// readResource routes resources/read by URI (exact resource, else template).
func (d *Dispatcher) readResource(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	res, err := forward(ctx, d, req.Session, req.Extra, "resources/read", req.Params.URI, req.Params.Meta,
		func(cctx context.Context, cs *mcp.ClientSession, t upstream.Target, meta mcp.Meta, in mcp.InputResponseMap, state string) (*mcp.ReadResourceResult, error) {
			return cs.ReadResource(cctx, &mcp.ReadResourceParams{Meta: meta, URI: t.Name, InputResponses: in, RequestState: state})
		},
		func(r *mcp.ReadResourceResult) (mcp.InputRequestMap, string) { return r.InputRequests, r.RequestState })
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Meta: backends.ForwardMeta(res.Meta), Contents: res.Contents}, nil
}

// getPrompt routes prompts/get by advertised prompt name.
func (d *Dispatcher) getPrompt(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
	res, err := forward(ctx, d, req.Session, req.Extra, "prompts/get", req.Params.Name, req.Params.Meta,
		func(cctx context.Context, cs *mcp.ClientSession, t upstream.Target, meta mcp.Meta, in mcp.InputResponseMap, state string) (*mcp.GetPromptResult, error) {
			return cs.GetPrompt(cctx, &mcp.GetPromptParams{Meta: meta, Name: t.Name, Arguments: req.Params.Arguments, InputResponses: in, RequestState: state})
		},
		func(r *mcp.GetPromptResult) (mcp.InputRequestMap, string) { return r.InputRequests, r.RequestState })
	if err != nil {
		return nil, err
	}
	return &mcp.GetPromptResult{Meta: backends.ForwardMeta(res.Meta), Description: res.Description, Messages: res.Messages}, nil
}

// sendFunc performs one round of a forwarded request on the client's
// backend session cs, with the _meta, inputResponses and backend
// requestState of that round.
type sendFunc[R any] func(context.Context, *mcp.ClientSession, upstream.Target, mcp.Meta, mcp.InputResponseMap, string) (R, error)

// forward sends one tools/call, resources/read or prompts/get through the
// call core over the caller's own backend session and drives multi
// round-trip rounds while the backend answers input_required. The caller
// rebuilds the result for a Legacy client: no resultType, ttlMs or
// cacheScope (2026-07-28 only) and no reserved _meta keys of the backend.
func forward[R interface{ NeedsInput() bool }](ctx context.Context, d *Dispatcher, ss *mcp.ServerSession, extra *mcp.RequestExtra,
	method, name string, meta mcp.Meta, send sendFunc[R], inputs func(R) (mcp.InputRequestMap, string)) (R, error) {
	var zero R
	s, err := d.session(ss)
	if err != nil {
		return zero, err
	}
	req := s.request(extra, method, name)
	t, err := d.core.Route(req)
	if err != nil {
		return zero, err
	}
	cs, err := s.backends.Get(ctx, t.Backend.Name())
	if err != nil {
		return zero, d.core.Start(req, t)(err)
	}
	if method == "tools/call" && t.Backend.Modern() && backends.HeaderParams(t.Tool) {
		// The go-sdk client builds Mcp-Param-* headers from its own tools
		// cache, which this session has not filled yet.
		if err := s.backends.Listed(ctx, t.Backend.Name(), cs); err != nil {
			return zero, d.core.Start(req, t)(err)
		}
	}
	c, end := s.calls.start(ctx, t.Backend.Name(), meta)
	defer end()
	ctx, unbind := s.bound(withCall(ctx, c)) // a deleted session cancels its backend calls
	defer unbind()
	out := s.outMeta(cs, meta)
	return upstream.Call(d.core, ctx, req, t, func(cctx context.Context) (R, error) {
		defer func() {
			if cctx.Err() != nil { // cancelled or timed out: the SDK is sending notifications/cancelled
				s.noteCancelled()
			}
		}()
		tracing.RewriteMeta(cctx, out) // a client's _meta.traceparent names vmcp's backend span instead
		res, err := send(cctx, cs, t, out, nil, "")
		if err == nil && moreInput(res, inputs) {
			res, err = rounds(ctx, s, t.Backend.Name(), res, inputs, func(in mcp.InputResponseMap, state string) (R, error) {
				return send(cctx, cs, t, out, in, state)
			})
		}
		return res, err
	})
}

// complete routes completion/complete by its reference: a prompt name or a
// resource (template) URI.
func (d *Dispatcher) complete(ctx context.Context, req *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
	s, err := d.session(req.Session)
	if err != nil {
		return nil, err
	}
	params, backend, err := d.agg.For(s.principal().Key()).Completion(req.Params)
	if err != nil {
		return nil, err
	}
	ureq := s.request(req.Extra, "completion/complete", "")
	t, err := d.core.Pin(ureq, backend, "", nil)
	if err != nil {
		return nil, err
	}
	return d.completeDo(ctx, s, ureq, t, params) // ViaRelay on every transport
}

// subscribe forwards resources/subscribe over the caller's own backend
// session to the backend that serves the URI.
func (d *Dispatcher) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	return d.subscription(ctx, req.Session, req.Extra, "resources/subscribe", req.Params.URI)
}

// unsubscribe forwards resources/unsubscribe like subscribe.
func (d *Dispatcher) unsubscribe(ctx context.Context, req *mcp.UnsubscribeRequest) error {
	return d.subscription(ctx, req.Session, req.Extra, "resources/unsubscribe", req.Params.URI)
}

func (d *Dispatcher) subscription(ctx context.Context, ss *mcp.ServerSession, extra *mcp.RequestExtra, method, uri string) error {
	s, err := d.session(ss)
	if err != nil {
		return err
	}
	req := s.request(extra, method, uri)
	t, err := d.core.Route(req)
	if err != nil {
		return err
	}
	ureq := *req
	ureq.Sessions = s.backends
	ureq.Caps = s.capabilitiesRaw()
	ctx, unbind := s.bound(ctx)
	defer unbind()
	// Through the call core: raw on a Legacy backend session; on a Modern
	// one a listen this session holds, its resources/updated to it alone.
	return d.core.Subscription(ctx, &ureq, t, s.listens, func(uri string) {
		d.resourceUpdated(s, &mcp.ResourceUpdatedNotificationParams{URI: uri})
	})
}

// request is the call core's view of one of this session's requests.
func (s *clientSession) request(extra *mcp.RequestExtra, method, name string) *upstream.Request {
	req := &upstream.Request{Method: method, Name: name, Revision: upstream.RevisionLegacy, Principal: s.principal()}
	if extra != nil {
		req.Header = extra.Header
	}
	return req
}
