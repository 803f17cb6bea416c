package metatools

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/toolsearch"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// Found is one search_tools result.
type Found struct {
	Name        string `json:"name"`
	Description string `json:"description,omitempty"`
	InputSchema any    `json:"inputSchema"`
	Backend     string `json:"backend"`
}

// searchArgs are search_tools' arguments.
type searchArgs struct {
	Query *string `json:"query"`
	Limit *int    `json:"limit"`
}

// Call serves search_tools (an upstream.OwnTool): the best matches for the
// query among the tools req's principal may use, as structuredContent
// {"tools": [...]} and the same JSON as text. Bad arguments, and call_tool
// arguments Rewrite could not unwrap, are -32602 naming the problem.
func (t *Tools) Call(ctx context.Context, req *upstream.Request, args json.RawMessage) (*mcp.CallToolResult, error) {
	if req.Name == CallName {
		return nil, invalid("call_tool: arguments must be an object with a string name (not call_tool) and an object arguments")
	}
	var a searchArgs
	if len(args) > 0 && json.Unmarshal(args, &a) != nil {
		return nil, invalid("search_tools: arguments must be an object with a string query and an integer limit")
	}
	limit := DefaultLimit
	switch {
	case a.Query == nil:
		return nil, invalid("search_tools: query is required")
	case a.Limit != nil && (*a.Limit < 1 || *a.Limit > MaxLimit):
		return nil, invalid(fmt.Sprintf("search_tools: limit must be 1 to %d", MaxLimit))
	case a.Limit != nil:
		limit = *a.Limit
	}
	start := time.Now()
	x, hits := t.hits(ctx, req, *a.Query, limit)
	text := x.result(hits)
	observe(t.m.search, start)
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(text)}}, StructuredContent: json.RawMessage(text)}, nil
}

// Search returns up to limit tools for query, best first, among those the
// policy lets req's principal use, from the catalogue that principal sees
// (lexical ranking, blended with embeddings when configured).
func (t *Tools) Search(ctx context.Context, req *upstream.Request, query string, limit int) []Found {
	x, hits := t.hits(ctx, req, query, limit)
	found := []Found{}
	for _, h := range hits {
		found = append(found, x.found(h.Doc))
	}
	return found
}

// hits ranks query in the index of the catalogue req's principal sees.
func (t *Tools) hits(ctx context.Context, req *upstream.Request, query string, limit int) (*indexed, []toolsearch.Hit) {
	x := t.index(t.agg.For(req.Principal.Key()))
	allow := func(doc int) bool {
		return t.policy.Allows(req.Principal, aggregator.KindTools, x.backends[doc], x.tools[doc].Name)
	}
	depth := limit
	if x.vecs != nil {
		depth = max(limit, toolsearch.FuseDepth)
	}
	return x, t.blend(ctx, x, query, x.ix.Search(query, depth, allow), limit, allow)
}

func invalid(msg string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: msg}
}
