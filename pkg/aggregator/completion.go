package aggregator

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

// Completion routes completion/complete by its reference: "ref/prompt" by
// advertised prompt name, "ref/resource" by resource URI or template. It
// returns the params to send to the backend (reference rewritten to the
// backend's own name) and the backend, or a -32602 error naming the ref.
func (c *Catalogue) Completion(p *mcp.CompleteParams) (*mcp.CompleteParams, string, error) {
	if p == nil || p.Ref == nil {
		return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "completion/complete: missing ref"}
	}
	out := *p
	ref := *p.Ref
	out.Ref = &ref
	var route Route
	var ok bool
	asked := ref.Name + ref.URI
	switch ref.Type {
	case "ref/prompt":
		_, route, ok = c.Prompt(ref.Name)
		ref.Name = route.Name
	case "ref/resource":
		if route, ok = c.Template(ref.URI); !ok {
			route, ok = c.Resource(ref.URI)
		}
		ref.URI = route.Name
	default:
		return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("completion/complete: unknown ref type %s", wire.Quote(ref.Type))}
	}
	if !ok {
		return nil, "", &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("completion/complete: unknown %s %s", wire.Quote(ref.Type), wire.Quote(asked))}
	}
	return &out, route.Backend, nil
}
