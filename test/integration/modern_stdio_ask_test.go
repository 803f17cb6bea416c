package integration

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestModernElicitationOnStdioBackendBecomesInputRequired pins issue 28's
// transport-dependent asks: a Modern client calling a stdio backend's
// elicitation tool got `"elicitation/create" cannot be sent while serving
// a request on protocol version 2026-07-28` (the call went on the Modern
// control connection), while the same tool over HTTP worked. It now goes
// on a keyed session at a Legacy revision through Core.Do and the ask
// reaches the client as input_required, on a Modern and a Legacy stdio
// server alike.
func TestModernElicitationOnStdioBackendBecomesInputRequired(t *testing.T) {
	v := harness.StartVMCP(t, nil, harness.StdioBackend(t, "ms"), harness.LegacyStdioBackend(t, "ls"))
	awaitTools(t, v, "ms_ask", "ls_ask")
	asked := 0
	cs := v.Connect(t, "", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked++
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
		}})
	require.GreaterOrEqual(t, cs.InitializeResult().ProtocolVersion, "2026-07-28")
	for _, tool := range []string{"ms_ask", "ls_ask"} {
		res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
		require.NoError(t, err, tool)
		require.False(t, res.IsError, "%s: %s", tool, harness.Text(t, res))
		require.Equal(t, "asked:accept:ada", harness.Text(t, res), tool)
	}
	require.Equal(t, 2, asked, "each call asked the client once")
}
