package legacy

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/mrtr"
	"golang.org/x/sync/errgroup"
)

// maxInputRounds bounds the multi round-trip rounds vmcp drives for one
// Legacy client call (mrtr.MaxRounds).
const maxInputRounds = mrtr.MaxRounds

// serverRequests is receiving middleware on a backend session: the
// backend's elicitation/create, sampling/createMessage and roots/list go to
// this client unchanged, on the originating call's stream, and are cancelled
// when the backend cancels them; one whose capability the client did not
// declare is refused. The SDK client's own handlers (which validate and
// could answer for the client) are skipped.
func (s *clientSession) serverRequests(backend string) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			var ir mcp.InputRequest
			switch p := req.GetParams().(type) {
			case *mcp.ElicitParams, *mcp.CreateMessageWithToolsParams, *mcp.ListRootsParams:
				ir = p.(mcp.InputRequest)
			default:
				return next(ctx, method, req)
			}
			// The originating call's context (its values put the request on
			// that call's stream), also ended by the backend's cancellation.
			octx, stop := joined(s.calls.origin(ctx, backend, method), ctx)
			defer stop()
			resp, err := s.ask(octx, ir)
			if err != nil {
				return nil, err
			}
			return resp.(mcp.Result), nil
		}
	}
}

// joined returns origin (whose values route the forwarded request to the
// originating call's stream), also cancelled when the backend's own request
// ctx is (notifications/cancelled from the backend, or its session ends).
func joined(origin, ctx context.Context) (context.Context, func()) {
	origin, cancel := context.WithCancel(origin)
	stop := context.AfterFunc(ctx, cancel)
	return origin, func() { stop(); cancel() }
}

// undeclared fails a server-to-client request (params p) whose capability
// the client did not declare: vmcp never sends one (a backend may try: the
// go-sdk's CreateMessage and ListRoots do not check the client's
// capabilities, unlike Elicit). It returns nil for any other message.
func (s *clientSession) undeclared(p any) error {
	switch p.(type) {
	case *mcp.ElicitParams:
		return s.undeclaredMethod("elicitation/create")
	case *mcp.CreateMessageParams, *mcp.CreateMessageWithToolsParams:
		return s.undeclaredMethod("sampling/createMessage")
	case *mcp.ListRootsParams:
		return s.undeclaredMethod("roots/list")
	}
	return nil
}

// undeclaredMethod is undeclared by method name; an unknown server-to-client
// method fails as not found.
func (s *clientSession) undeclaredMethod(method string) error {
	c := &mcp.ClientCapabilities{}
	if ip := s.front.InitializeParams(); ip != nil && ip.Capabilities != nil {
		c = ip.Capabilities
	}
	var name string
	switch method {
	case "elicitation/create":
		if c.Elicitation != nil {
			return nil
		}
		name = "elicitation"
	case "sampling/createMessage":
		if c.Sampling != nil {
			return nil
		}
		name = "sampling"
	case "roots/list":
		if c.RootsV2 != nil {
			return nil
		}
		name = "roots"
	case "ping":
		return nil
	default:
		return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "vmcp does not relay " + method + " to clients"}
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: "client does not support " + name + " (not declared in its capabilities)"}
}

// fulfil answers a Modern backend's inputRequests by asking this client
// (elicitation, sampling, roots on its session), concurrently.
func (s *clientSession) fulfil(ctx context.Context, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	ctx, unbind := s.bound(ctx) // a deleted session cancels its requests to the client
	defer unbind()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(8)
	out := make(mcp.InputResponseMap, len(reqs))
	res := make([]mcp.InputResponse, 0, len(reqs))
	ids := make([]string, 0, len(reqs))
	for id := range reqs {
		ids = append(ids, id)
	}
	res = res[:len(ids)]
	for i, id := range ids {
		g.Go(func() error {
			r, err := s.ask(gctx, reqs[id])
			if err != nil {
				return fmt.Errorf("input request %q: %w", id, err)
			}
			res[i] = r
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	for i, id := range ids {
		out[id] = res[i]
	}
	return out, nil
}

func (s *clientSession) ask(ctx context.Context, ir mcp.InputRequest) (mcp.InputResponse, error) {
	if err := s.undeclared(ir); err != nil {
		return nil, err
	}
	switch p := ir.(type) {
	case *mcp.ElicitParams:
		return s.front.Elicit(ctx, p)
	case *mcp.CreateMessageWithToolsParams:
		return s.front.CreateMessageWithTools(ctx, p)
	case *mcp.CreateMessageParams:
		return s.front.CreateMessage(ctx, p)
	case *mcp.ListRootsParams:
		return s.front.ListRoots(ctx, p)
	}
	return nil, fmt.Errorf("unsupported input request %T", ir)
}

// moreInput reports whether res asks for another round (mrtr.MoreInput):
// input_required, or a Legacy result still carrying inputRequests.
func moreInput[R interface{ NeedsInput() bool }](res R, inputs func(R) (mcp.InputRequestMap, string)) bool {
	reqs, _ := inputs(res)
	return mrtr.MoreInput(res.NeedsInput(), reqs)
}

// rounds drives multi round-trip for one call: while the backend answers
// input_required (or, a Legacy backend, a result still carrying
// inputRequests), ask this client and retry with inputResponses and the
// backend's requestState unchanged.
func rounds[R interface{ NeedsInput() bool }](ctx context.Context, s *clientSession, backend string, res R,
	inputs func(R) (mcp.InputRequestMap, string), retry func(mcp.InputResponseMap, string) (R, error)) (R, error) {
	for n := 0; moreInput(res, inputs); n++ {
		if n >= maxInputRounds {
			var zero R
			return zero, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("backend %q: more than %d input rounds", backend, maxInputRounds)}
		}
		reqs, state := inputs(res)
		responses, err := s.fulfil(ctx, reqs)
		if err != nil {
			var zero R
			return zero, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("backend %q: %v", backend, err)}
		}
		if res, err = retry(responses, state); err != nil {
			var zero R
			return zero, err
		}
	}
	return res, nil
}
