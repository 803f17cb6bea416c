package main

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/test/livemcpbench"
)

// mountCatalogue serves the LiveMCPBench catalogue in dir (the search row):
// server i of tools.json at /lmb/i/mcp with its tools (and its
// description as its serverInfo's, which vmcp's tool search indexes), and fill more
// servers at /fill/k/mcp, each with every distinct tool of the catalogue
// renamed NAME_fK (filler for the 10,000-tool search). Every tool answers
// with a canned result naming itself. It returns how many tools it serves.
func mountCatalogue(mux *http.ServeMux, dir string, fill int, stateless bool) (int, error) {
	servers, _, err := livemcpbench.Load(dir)
	if err != nil {
		return 0, err
	}
	total := 0
	for i, s := range servers {
		total += mountServer(mux, fmt.Sprintf("/lmb/%d/mcp", i), &mcp.Implementation{Name: s.Name, Description: s.Description, Version: "bench"}, s.Tools, "", stateless)
	}
	var all []livemcpbench.Tool
	for _, s := range servers {
		all = append(all, s.Tools...)
	}
	for k := range fill {
		total += mountServer(mux, fmt.Sprintf("/fill/%d/mcp", k), &mcp.Implementation{Name: fmt.Sprintf("fill%d", k), Version: "bench"}, all, fmt.Sprintf("_f%d", k), stateless)
	}
	return total, nil
}

// mountServer serves tools (names with suffix; a repeated name once) as
// one MCP server at path and returns how many it serves.
func mountServer(mux *http.ServeMux, path string, info *mcp.Implementation, tools []livemcpbench.Tool, suffix string, stateless bool) int {
	srv := mcp.NewServer(info, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})
	seen := map[string]bool{}
	for _, t := range tools {
		tn := t.Name + suffix
		if seen[tn] {
			continue
		}
		seen[tn] = true
		var schema any = map[string]any{"type": "object"}
		if len(t.InputSchema) > 0 && json.Valid(t.InputSchema) {
			var s map[string]any
			if json.Unmarshal(t.InputSchema, &s) == nil && s["type"] == "object" {
				schema = s
			}
		}
		canned := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "canned result of " + tn}}}
		srv.AddTool(&mcp.Tool{Name: tn, Description: t.Description, InputSchema: schema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return canned, nil })
	}
	mux.Handle(path, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: stateless, Logger: slog.New(slog.DiscardHandler)}))
	return len(seen)
}
