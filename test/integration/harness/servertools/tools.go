// Package servertools are tools of the test backends that any transport
// serves alike (the stdio server program, in-process SSE and HTTP servers).
package servertools

import (
	"context"
	"encoding/json"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Add adds to s: "report" (one log message per level, debug to error,
// with data {marker, level}; then progress 1..n with the request's token
// and the marker as message; returns "reported:<marker>"), "ask"
// (elicitation/create "name?"; returns "asked:<action>:<name>"),
// "wait" (sends progress 0 with the request's token, then returns only
// when cancelled) and "cancelled" (waits until at least its argument
// "min" "wait" calls were cancelled, then returns their number as text).
func Add(s *mcp.Server) {
	c := &counter{changed: make(chan struct{})}
	obj := map[string]any{"type": "object"}
	s.AddTool(&mcp.Tool{Name: "report", InputSchema: obj}, report)
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: obj}, ask)
	s.AddTool(&mcp.Tool{Name: "wait", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if tok := req.Params.GetProgressToken(); tok != nil {
				_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Message: "waiting"})
			}
			<-ctx.Done()
			c.add()
			return nil, ctx.Err()
		})
	s.AddTool(&mcp.Tool{Name: "cancelled", InputSchema: obj},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Min int64 }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			n, err := c.atLeast(ctx, args.Min)
			return Text(strconv.FormatInt(n, 10)), err
		})
}

// counter counts cancelled "wait" calls; changed is closed and replaced
// at each.
type counter struct {
	mu      sync.Mutex
	n       int64
	changed chan struct{}
}

func (c *counter) add() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	close(c.changed)
	c.changed = make(chan struct{})
}

// atLeast waits until the count is at least min, or ctx ends.
func (c *counter) atLeast(ctx context.Context, min int64) (int64, error) {
	for {
		c.mu.Lock()
		n, ch := c.n, c.changed
		c.mu.Unlock()
		if n >= min {
			return n, nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return n, ctx.Err()
		}
	}
}

// Text is a result with one text content.
func Text(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// ask is the "ask" tool: it elicits a name from the client.
func ask(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{
		"type": "object", "properties": map[string]any{"name": map[string]any{"type": "string"}},
	}})
	if err != nil {
		return nil, err
	}
	name, _ := res.Content["name"].(string)
	return Text("asked:" + res.Action + ":" + name), nil
}

// report is the "report" tool: logs at four levels, then progress 1..n.
func report(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Marker string `json:"marker"`
		N      int    `json:"n"`
	}
	_ = json.Unmarshal(req.Params.Arguments, &args)
	for _, lv := range []mcp.LoggingLevel{"debug", "info", "warning", "error"} {
		data := map[string]any{"marker": args.Marker, "level": string(lv)}
		if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: lv, Logger: "report", Data: data}); err != nil {
			return nil, err
		}
	}
	if tok := req.Params.GetProgressToken(); tok != nil {
		for i := 1; i <= args.N; i++ {
			p := &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(args.N), Message: args.Marker}
			if err := req.Session.NotifyProgress(ctx, p); err != nil {
				return nil, err
			}
		}
	}
	return Text("reported:" + args.Marker), nil
}
