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
	flag.Parse()
	if *debug != "" {
		go func() { log.Println(http.ListenAndServe(*debug, nil)) }() // DefaultServeMux: net/http/pprof
	}

	srv := mcp.NewServer(&mcp.Implementation{Name: "echoserver", Version: "bench"}, &mcp.ServerOptions{
		PageSize: *pageSize,
		Logger:   slog.New(slog.DiscardHandler),
	})
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
