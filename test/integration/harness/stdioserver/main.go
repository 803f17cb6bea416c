// Command stdioserver is the MCP server over stdio used by
// harness.StdioBackend. Tools: "echo" returns its "text" argument,
// "whoami" returns an id drawn at random when the process starts,
// "counter" returns a per-session counter starting at 1, "roots" returns
// the client's roots (roots/list) as comma-separated URIs,
// "roots_changed" how many notifications/roots/list_changed it received,
// and "report" sends one log message per level (debug, info, warning,
// error; data {marker, level}), then n progress notifications 1..n (with
// the request's token, the marker as message), and returns
// "reported:<marker>"; "ask" elicits a name ("asked:<action>:<name>"),
// "wait" returns only when cancelled, "cancelled" counts those
// (servertools). The prompt "greet" completes any argument with "alpha"
// and "alpha2"; mem://note may be subscribed, and "touch" tells its
// subscribers it changed (notes.go).
// With STDIOSERVER_LEGACY set it negotiates only Legacy revisions. With
// STDIOSERVER_JUNK set it prints a banner and a junk line on stdout before
// serving, a junk line before each "echo" result, and a line on stderr, as
// real servers do. With STDIOSERVER_DIE_ON_PING set it exits when pinged.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/test/integration/harness/servertools"
)

func main() {
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])

	var rootsChanged atomic.Int64
	opts := &mcp.ServerOptions{
		RootsListChangedHandler: func(context.Context, *mcp.RootsListChangedRequest) { rootsChanged.Add(1) },
	}
	noteOptions(opts)                          // completions and resource subscriptions (notes.go)
	if os.Getenv("STDIOSERVER_LEGACY") != "" { // a server that predates 2026-07-28
		opts.SupportedProtocolVersions = []string{"2025-11-25", "2025-06-18", "2025-03-26"}
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "stdioserver", Version: "test"}, opts)
	junk := os.Getenv("STDIOSERVER_JUNK") != ""
	if junk {
		fmt.Println("Starting stdioserver...")
		fmt.Println("  debug: listening on stdio")
		fmt.Fprintln(os.Stderr, "stdioserver: stderr is for logs")
	}
	if os.Getenv("STDIOSERVER_DIE_ON_PING") != "" {
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method == "ping" {
					os.Exit(3)
				}
				return next(ctx, method, req)
			}
		})
	}
	text := func(s string) *mcp.CallToolResult {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	s.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{
		"type":       "object",
		"properties": map[string]any{"text": map[string]any{"type": "string"}},
	}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var args struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(req.Params.Arguments, &args)
		if junk {
			fmt.Println("echo: " + args.Text)
		}
		return text(args.Text), nil
	})
	s.AddTool(&mcp.Tool{Name: "whoami", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(id), nil
		})
	var mu sync.Mutex
	counts := map[string]int{}
	s.AddTool(&mcp.Tool{Name: "counter", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mu.Lock()
			defer mu.Unlock()
			counts[req.Session.ID()]++
			return text(strconv.Itoa(counts[req.Session.ID()])), nil
		})
	s.AddTool(&mcp.Tool{Name: "roots_changed", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return text(strconv.FormatInt(rootsChanged.Load(), 10)), nil
		})
	s.AddTool(&mcp.Tool{Name: "roots", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			res, err := req.Session.ListRoots(ctx, nil)
			if err != nil {
				return nil, err
			}
			var uris []string
			for _, r := range res.Roots {
				uris = append(uris, r.URI)
			}
			return text(strings.Join(uris, ",")), nil
		})
	servertools.Add(s) // report, ask, wait, cancelled
	addNote(s)         // the prompt "greet", mem://note and "touch" (notes.go)
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Printf("stdioserver: %v", err)
	}
}
