package legacy

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/mrtr"
)

// maxInputRounds bounds the multi round-trip rounds vmcp drives for one
// Legacy client call (mrtr.MaxRounds).
const maxInputRounds = mrtr.MaxRounds

// serverRequests is receiving middleware on a backend session: a
// server-to-client request that reaches the backend session's go-sdk
// client (elicitation/create, sampling/createMessage, roots/list outside
// any request Do sent: on an HTTP backend's GET stream) goes to this
// client unchanged, on its GET stream, and is cancelled when the backend
// cancels it; one whose capability the client did not declare is refused.
// (During a request Do sent, its asks come on its own Stream: the relay.)
// The SDK client's own handlers (which validate and could answer for the
// client) are skipped.
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
			resp, err := s.ask(ctx, ir)
			if err != nil {
				return nil, err
			}
			return resp.(mcp.Result), nil
		}
	}
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

// ask sends the client a backend's server-to-client request ir through
// the go-sdk session and returns its answer.
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
