package vmcp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// BenchmarkLegacyToolsList is one Legacy tools/list page of 100 tools on a
// live session, as vmcp answers it (the relay, before the go-sdk handler).
func BenchmarkLegacyToolsList(b *testing.B) {
	be := harness.StartBackend(b, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddTools(s, "t", 300) })
	v := harness.StartVMCP(b, func(c *config.Config) { c.Pagination.PageSize = 100 }, be.Config())
	cs := v.Connect(b, "2025-11-25", nil)
	const body = `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`
	b.ReportAllocs()
	for b.Loop() {
		req, _ := http.NewRequest(http.MethodPost, v.URL, strings.NewReader(body))
		req.Header.Set("Mcp-Session-Id", cs.ID())
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		n, _ := io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK || n < 1000 {
			b.Fatalf("status %d, %d bytes", resp.StatusCode, n)
		}
	}
}
