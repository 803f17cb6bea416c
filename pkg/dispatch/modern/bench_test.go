package modern_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkModernCall is one tools/call from a default (2026-07-28) go-sdk
// client: through vmcp to a stateless go-sdk backend, and directly against
// that backend. Allocations count every process in the test (client, vmcp
// and backend).
func BenchmarkModernCall(b *testing.B) {
	be := startBackend(b, "b", true, func(s *mcp.Server) { echo(s, "b", "echo") })
	url, _ := startVMCP(b, nil, be)
	for _, c := range []struct{ name, url, tool string }{
		{"direct", be.URL, "echo"},
		{"vmcp", url, "b_echo"},
	} {
		cs := connect(b, c.url)
		if v := cs.InitializeResult().ProtocolVersion; v != modernV {
			b.Fatalf("%s negotiated %s", c.name, v)
		}
		params := &mcp.CallToolParams{Name: c.tool, Arguments: map[string]any{"text": "hi"}}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := cs.CallTool(context.Background(), params); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/parallel", func(b *testing.B) {
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if _, err := cs.CallTool(context.Background(), params); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
}

// connect opens a default go-sdk client session to url.
func connect(b *testing.B, url string) *mcp.ClientSession {
	b.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	tr := &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	cs, err := client.Connect(context.Background(), tr, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cs.Close() })
	return cs
}
