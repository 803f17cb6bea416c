package upstream

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OwnTool serves a call of one of vmcp's own tools (aggregator.Own: tool
// search's search_tools) for req's principal with the call's raw
// arguments. Its error is the spec's JSON-RPC error.
type OwnTool func(ctx context.Context, req *Request, args json.RawMessage) (*mcp.CallToolResult, error)

// SetOwnTool makes CallOwn serve vmcp's own tools with f (call before
// serving; nil: none).
func (c *Core) SetOwnTool(f OwnTool) { c.own = f }

// CallOwn serves req, a tools/call, when its name is one of vmcp's own
// tools in the catalogue its principal sees (ok true); any other name is
// left to Route (ok false). Both dispatchers ask it before routing.
func (c *Core) CallOwn(ctx context.Context, req *Request, args json.RawMessage) (res *mcp.CallToolResult, ok bool, err error) {
	if c.own == nil || req.Method != "tools/call" {
		return nil, false, nil
	}
	if _, rt, found := c.agg.For(req.Principal.Key()).Tool(req.Name); !found || !rt.Own() {
		return nil, false, nil
	}
	res, err = c.own(ctx, req, args)
	return res, true, err
}
