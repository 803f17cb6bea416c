package vmcp_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// A Legacy (2025-11-25) client must not receive 2026-07-28-only fields
// (resultType, the Modern backend's serverInfo _meta) from a Modern backend.
func TestModernBackendFieldsDoNotLeakToLegacyClients(t *testing.T) {
	b := harness.StartBackend(t, "modern", harness.Stateless, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := harness.StartVMCP(t, func(c *config.Config) { c.Aggregation.ConflictResolution = config.StrategyPriority }, b.Config())

	post := func(session, body string) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodPost, v.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if session != "" {
			req.Header.Set("Mcp-Session-Id", session)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp, string(data)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	session := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, session)
	post(session, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	_, body := post(session, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}`)
	require.Contains(t, body, "echo:hi")
	require.NotContains(t, body, "resultType")
	require.NotContains(t, body, mcp.MetaKeyServerInfo)
}
