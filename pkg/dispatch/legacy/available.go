package legacy

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

// listMethods are the list requests answered from the catalogue.
var listMethods = map[string]bool{
	"tools/list":               true,
	"prompts/list":             true,
	"resources/list":           true,
	"resources/templates/list": true,
}

// availability is receiving middleware: while no backend is ready, a list
// request fails with -32603 instead of succeeding with an empty list, which
// a client would take for "this server has nothing"; an unknown tool's
// -32602 names the backends that are down; a completion of a prompt or
// resource the policy hides is refused as an unknown reference.
func (d *Dispatcher) availability(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if listMethods[method] && !d.mgr.Ready() {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no backend is available"}
		}
		if p, ok := req.GetParams().(*mcp.CompleteParams); ok && method == "completion/complete" {
			if err := d.hiddenCompletion(req, p); err != nil {
				return nil, err
			}
		}
		if method == "tools/call" {
			if r, ok := req.(*mcp.CallToolRequest); ok && r.Params != nil {
				return d.unregistered(ctx, r, next, method)
			}
		}
		return next(ctx, method, req)
	}
}

// unregistered serves a tools/call the SDK registry cannot: a name the
// session's principal does not see is -32602 naming the backends that are
// down; a tool only the principal's own catalogue has (a per-principal
// backend's, never registered with the SDK server) goes to callTool
// directly. Everything else takes the SDK path (next).
func (d *Dispatcher) unregistered(ctx context.Context, r *mcp.CallToolRequest, next mcp.MethodHandler, method string) (mcp.Result, error) {
	var owner string
	if s, err := d.session(r.Session); err == nil {
		owner = s.principal().Key()
	}
	if _, _, known := d.agg.For(owner).Tool(r.Params.Name); !known {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %s%s", wire.Quote(r.Params.Name), d.mgr.Unavailable())}
	}
	if _, _, shared := d.agg.Current().Tool(r.Params.Name); !shared {
		res, err := d.callTool(ctx, r)
		if err != nil {
			return nil, err
		}
		if res.Content == nil {
			res.Content = []mcp.Content{} // as the SDK server answers: never "null"
		}
		return res, nil
	}
	return next(ctx, method, r)
}

// hiddenCompletion is upstream.Core.HiddenCompletion for the principal of
// req's session.
func (d *Dispatcher) hiddenCompletion(req mcp.Request, p *mcp.CompleteParams) error {
	ss, _ := req.GetSession().(*mcp.ServerSession)
	s, err := d.session(ss)
	if err != nil {
		return err
	}
	return d.core.HiddenCompletion(s.principal(), p)
}
