package vmcp_test

import (
	"context"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
)

// A backend: a go-sdk server with one tool, served over streamable HTTP.
func startBackend() *httptest.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "notes", Version: "1.0.0"}, nil)
	type args struct {
		Text string `json:"text"`
	}
	mcp.AddTool(s, &mcp.Tool{Name: "shout", Description: "Upper-cases text"},
		func(_ context.Context, _ *mcp.CallToolRequest, a args) (*mcp.CallToolResult, any, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: a.Text + "!"}}}, nil, nil
		})
	return httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
}

// serve builds vmcp over the backend at url, waits until the backend's
// tools are in its catalogue, and serves it; stop ends both.
func serve(url string) (front *httptest.Server, stop func()) {
	cfg, err := config.Parse([]byte("backends:\n  - name: notes\n    url: "+url+"\n"), "inline.yaml")
	if err != nil {
		log.Fatal(err)
	}
	srv, err := vmcp.New(cfg, vmcp.Options{})
	if err != nil {
		log.Fatal(err)
	}
	if err := srv.WaitReady(context.Background()); err != nil {
		log.Fatal(err)
	}
	front = httptest.NewServer(srv.Handler())
	return front, func() { front.Close(); _ = srv.Close() }
}

// Embed vmcp in a Go program: build it from a config value, serve its
// handler, and use it from a go-sdk client like any MCP server. Tools are
// advertised as backend_tool by default (conflict strategy prefix). The
// client here speaks the Legacy revision; drop ProtocolVersion for Modern.
func Example() {
	backend := startBackend()
	defer backend.Close()

	front, stop := serve(backend.URL) // config.Parse, vmcp.New, WaitReady, Handler
	defer stop()
	ctx := context.Background()

	client := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1.0.0"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: front.URL + "/mcp"},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	tools, err := cs.ListTools(ctx, nil)
	if err != nil {
		log.Fatal(err)
	}
	for _, t := range tools.Tools {
		fmt.Println("tool:", t.Name)
	}
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes_shout", Arguments: map[string]any{"text": "hello"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("result:", res.Content[0].(*mcp.TextContent).Text)
	// Output:
	// tool: notes_shout
	// result: hello!
}

// A Modern (2026-07-28) client, the go-sdk's default, calls through the
// same server: no session, every request self-contained.
func Example_modern() {
	backend := startBackend()
	defer backend.Close()
	front, stop := serve(backend.URL)
	defer stop()
	ctx := context.Background()

	cs, err := mcp.NewClient(&mcp.Implementation{Name: "example", Version: "1.0.0"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: front.URL + "/mcp"}, nil)
	if err != nil {
		log.Fatal(err)
	}
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "notes_shout", Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(cs.InitializeResult().ProtocolVersion, res.Content[0].(*mcp.TextContent).Text)
	// Output: 2026-07-28 hi!
}
