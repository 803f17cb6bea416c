package vmcp_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

func TestCrossOriginRequestsAreRefusedIncludingGET(t *testing.T) {
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := harness.StartVMCP(t, func(c *config.Config) { c.HTTP.AllowedOrigins = []string{"https://trusted.example"} }, b.Config())

	do := func(method, origin string) int {
		body := strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
		req, err := http.NewRequest(method, v.URL, body)
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if origin != "" {
			req.Header.Set("Origin", origin)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp.StatusCode
	}
	require.Equal(t, http.StatusForbidden, do(http.MethodPost, "https://evil.example"))
	require.Equal(t, http.StatusForbidden, do(http.MethodGet, "https://evil.example"))
	require.Equal(t, http.StatusOK, do(http.MethodPost, "https://trusted.example"))
	require.Equal(t, http.StatusOK, do(http.MethodPost, ""), "non-browser clients send no Origin")
}

func TestMetricsEndpointServesPrometheusText(t *testing.T) {
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := harness.StartVMCP(t, nil, b.Config())
	resp, err := http.Get(v.Base + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
}
