// Command stdioserver is the MCP server over stdio used by
// harness.StdioBackend. Tools: "echo" returns its "text" argument,
// "whoami" returns an id drawn at random when the process starts, and
// "counter" returns a per-session counter starting at 1.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func main() {
	var b [8]byte
	_, _ = rand.Read(b[:])
	id := hex.EncodeToString(b[:])

	s := mcp.NewServer(&mcp.Implementation{Name: "stdioserver", Version: "test"}, nil)
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
	if err := s.Run(context.Background(), &mcp.StdioTransport{}); err != nil {
		log.Printf("stdioserver: %v", err)
	}
}
