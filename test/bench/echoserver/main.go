// Command echoserver is the backend of the vmcp benchmark (test/bench): a
// minimal go-sdk MCP server with one tool, echo, returning its text
// argument, plus -tools extra tools for the tools/list walk. It serves
// streamable HTTP at /mcp, stateful by default (Legacy sessions) or
// stateless with -stateless (Modern-capable). Once listening it prints
// "listening http://ADDR/mcp" on stdout. With -catalogue it also serves
// the LiveMCPBench servers (and -fill filler servers) for the search row.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"log/slog"
	"net"
	"net/http"
	_ "net/http/pprof"
	"os"
	"slices"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:0", "listen address")
	stateless := flag.Bool("stateless", false, "serve statelessly (Modern-capable) instead of with Legacy sessions")
	tools := flag.Int("tools", 200, "extra tools besides echo (for the tools/list walk)")
	pageSize := flag.Int("page-size", 50, "tools/list page size")
	debug := flag.String("pprof", "", "if set, serve net/http/pprof on this address (the bench counts goroutines there)")
	catalogue := flag.String("catalogue", "", "if set, a LiveMCPBench data directory: also serve its servers at /lmb/I/mcp (catalogue.go)")
	fill := flag.Int("fill", 0, "with -catalogue, filler servers at /fill/K/mcp, each with every catalogue tool renamed")
	legacyOnly := flag.Bool("legacy-only", false, "serve Legacy revisions only (2025-11-25 and older): a Legacy backend to a Modern client of vmcp")
	flag.Parse()
	if *debug != "" {
		go func() { log.Println(http.ListenAndServe(*debug, nil)) }() // DefaultServeMux: net/http/pprof
	}

	srv := mcp.NewServer(&mcp.Implementation{Name: "echoserver", Version: "bench"}, serverOptions(*pageSize, *legacyOnly))
	srv.AddTool(&mcp.Tool{Name: "echo", Description: "returns its text argument", InputSchema: textSchema("text to echo")}, echo)
	for i := range *tools {
		name := fmt.Sprintf("tool%04d", i)
		srv.AddTool(&mcp.Tool{
			Name:        name,
			Description: fmt.Sprintf("benchmark filler tool number %d; it returns its own name", i),
			InputSchema: textSchema("ignored"),
		}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
		})
	}
	var touched atomic.Int64 // touch adds a tool: every session gets tools/list_changed (the bench's fan-out row)
	srv.AddTool(&mcp.Tool{Name: "touch", Description: "adds a tool, so that clients get tools/list_changed", InputSchema: textSchema("ignored")},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			name := fmt.Sprintf("dyn%06d", touched.Add(1))
			srv.AddTool(&mcp.Tool{Name: name, InputSchema: textSchema("ignored")}, echo)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
		})
	// progress sends count notifications/progress for the call's
	// progressToken, then returns (the bench's progress row).
	srv.AddTool(&mcp.Tool{Name: "progress", Description: "sends count progress notifications, then returns", InputSchema: map[string]any{
		"type": "object", "properties": map[string]any{"count": map[string]any{"type": "integer"}},
	}}, progress)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless: *stateless,
		Logger:    slog.New(slog.DiscardHandler),
	})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	if *catalogue != "" {
		n, err := mountCatalogue(mux, *catalogue, *fill, *stateless)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Fprintf(os.Stderr, "serving %d catalogue tools\n", n)
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stdout, "listening http://%s/mcp\n", ln.Addr())
	log.Fatal(http.Serve(ln, mux))
}

// serverOptions are the server's options: tools/list pages of pageSize;
// with legacyOnly only the Legacy revisions (older than 2026-07-28).
func serverOptions(pageSize int, legacyOnly bool) *mcp.ServerOptions {
	opts := &mcp.ServerOptions{PageSize: pageSize, Logger: slog.New(slog.DiscardHandler)}
	if legacyOnly {
		opts.SupportedProtocolVersions = slices.DeleteFunc(mcp.SupportedProtocolVersions(), func(v string) bool { return v >= "2026-07-28" })
	}
	return opts
}

func textSchema(desc string) map[string]any {
	return map[string]any{
		"type":       "object",
		"properties": map[string]any{"text": map[string]any{"type": "string", "description": desc}},
	}
}

func echo(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Text string `json:"text"`
	}
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: args.Text}}}, nil
}

// progress sends the call's count progress notifications (none without a
// progressToken) and returns how many it sent.
func progress(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	var args struct {
		Count int `json:"count"`
	}
	if len(req.Params.Arguments) > 0 {
		if err := json.Unmarshal(req.Params.Arguments, &args); err != nil {
			return nil, err
		}
	}
	tok := req.Params.GetProgressToken()
	sent := 0
	for i := 0; tok != nil && i < args.Count; i++ {
		p := &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i + 1), Total: float64(args.Count)}
		if err := req.Session.NotifyProgress(ctx, p); err != nil {
			return nil, fmt.Errorf("progress %d of %d: %w", i+1, args.Count, err)
		}
		sent++
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: fmt.Sprint(sent)}}}, nil
}
