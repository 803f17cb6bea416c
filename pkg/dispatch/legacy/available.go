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
			if p, ok := req.GetParams().(*mcp.CallToolParamsRaw); ok {
				if _, _, known := d.agg.Current().Tool(p.Name); !known {
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %s%s", wire.Quote(p.Name), d.mgr.Unavailable())}
				}
			}
		}
		return next(ctx, method, req)
	}
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
