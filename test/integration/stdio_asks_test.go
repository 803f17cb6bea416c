package integration

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestStdioElicitationReachesLegacyCallWithoutGetStream (issue 28, "Asks
// that depend on the transport"): a Legacy client that declares
// elicitation but holds no GET stream calls a stdio backend's tool that
// asks for elicitation. The ask must reach the call's own POST stream and
// the call return its result; before, no elicitation/create arrived and
// the call timed out (30 s by default).
func TestStdioElicitationReachesLegacyCallWithoutGetStream(t *testing.T) {
	t.Parallel()
	b := harness.StdioBackend(t, "st")
	b.Timeout = config.Duration(20 * time.Second) // a failing run ends sooner
	v := harness.StartVMCP(t, nil, b)
	asked := make(chan string, 1)
	client := mcp.NewClient(&mcp.Implementation{Name: "no-get", Version: "test"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
		ElicitationHandler: func(_ context.Context, req *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- req.Params.Message
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: v.URL, HTTPClient: &http.Client{}, DisableStandaloneSSE: true},
		&mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cs.Close()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "st_ask", Arguments: map[string]any{}})
	require.NoError(t, err)
	require.Equal(t, "asked:accept:ada", harness.Text(t, res))
	select {
	case msg := <-asked:
		require.Equal(t, "name?", msg)
	default:
		t.Fatal("the client's elicitation handler was not called")
	}
}
