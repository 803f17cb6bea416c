package harness

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// textSchema is the input schema {"text": string} of the echo tools.
var textSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"text": map[string]any{"type": "string"}},
}

// textArg returns the "text" argument of a tools/call request ("" if absent
// or not a string).
func textArg(req *mcp.CallToolRequest) string {
	var args struct {
		Text string `json:"text"`
	}
	if len(req.Params.Arguments) > 0 {
		_ = json.Unmarshal(req.Params.Arguments, &args)
	}
	return args.Text
}

func textResult(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// AddEcho adds tool name to s: called with {"text": string} it returns the
// text "<name>:<text>".
func AddEcho(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, Description: "echoes its text argument", InputSchema: textSchema},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResult(name + ":" + textArg(req)), nil
		})
}

// AddTools adds n tools named fmt.Sprintf("%s%04d", prefix, i) for i in
// [0, n); each returns its own name as text.
func AddTools(s *mcp.Server, prefix string, n int) {
	for i := range n {
		name := fmt.Sprintf("%s%04d", prefix, i)
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResult(name), nil
			})
	}
}

// AddCounter adds tool name to s, returning as text a counter that starts
// at 1 and is kept per backend session (keyed by req.Session.ID()), so that
// two client sessions sharing a backend session would see each other's
// counts. On a Stateless backend every request has the same empty ID.
func AddCounter(s *mcp.Server, name string) {
	var mu sync.Mutex
	counts := map[string]int{}
	s.AddTool(&mcp.Tool{Name: name, Description: "per-session counter", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			mu.Lock()
			defer mu.Unlock()
			id := req.Session.ID()
			counts[id]++
			return textResult(strconv.Itoa(counts[id])), nil
		})
}

// ToolNames lists every tool name cs sees, walking all pages with
// cs.Tools. It fails the test on an error or after 30s.
func ToolNames(t testing.TB, cs *mcp.ClientSession) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var names []string
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			t.Fatalf("harness: listing tools: %v", err)
		}
		names = append(names, tool.Name)
	}
	return names
}

// Text returns the text of the first TextContent of res; it fails the test
// if res is nil or has none.
func Text(t testing.TB, res *mcp.CallToolResult) string {
	t.Helper()
	if res == nil {
		t.Fatalf("harness: nil CallToolResult")
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			return tc.Text
		}
	}
	t.Fatalf("harness: result has no text content: %+v", res)
	return ""
}
