package integration

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestModernProgressFloodBufferedUnbounded pins issue 28's unbounded
// buffering: a backend sending 20,000 notifications/progress for a Modern
// call with a progressToken (a Modern backend's direct POST; a Legacy
// backend's call on its keyed session, also one whose client can be asked,
// whose Stream the dispatcher would park). They reach the client in order,
// and at no point do more than upstream.QueueCapacity of them wait inside
// vmcp between the backend's stream and the client's (the call core's
// queue high water; a full queue stalls the backend's stream instead).
func TestModernProgressFloodBufferedUnbounded(t *testing.T) {
	for _, tc := range []struct {
		name string
		mode harness.Mode
		caps *mcp.ClientCapabilities
	}{
		{"Modern backend", harness.Stateless, &mcp.ClientCapabilities{}},
		{"Legacy backend", harness.Stateful, &mcp.ClientCapabilities{}},
		{"Legacy backend, client can be asked", harness.Stateful, &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}},
	} {
		t.Run(tc.name, func(t *testing.T) { progressFlood(t, tc.mode, tc.caps) })
	}
}

// progressFlood is one case of TestModernProgressFloodBufferedUnbounded.
func progressFlood(t *testing.T, mode harness.Mode, caps *mcp.ClientCapabilities) {
	const n = 20_000
	be := harness.StartBackend(t, "flood", mode, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "flood", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			tok := req.Params.GetProgressToken()
			for i := 1; i <= n; i++ {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i)}); err != nil {
					return nil, err
				}
			}
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	})
	cfg := be.Config()
	cfg.Timeout = config.Duration(5 * time.Minute) // -race on a loaded machine: the bound is not on time
	v := harness.StartVMCP(t, nil, cfg)
	var got, inOrder atomic.Int64
	all := make(chan struct{})
	client := mcp.NewClient(&mcp.Implementation{Name: "flood-client", Version: "test"}, &mcp.ClientOptions{
		Capabilities: caps,
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
			k := got.Add(1)
			if int64(r.Params.Progress) == k {
				inOrder.Add(1)
			}
			if k == n {
				close(all)
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: v.URL}, nil)
	require.NoError(t, err)
	defer cs.Close()
	require.GreaterOrEqual(t, cs.InitializeResult().ProtocolVersion, "2026-07-28")
	params := &mcp.CallToolParams{Name: "flood_flood", Arguments: map[string]any{}}
	params.SetProgressToken("tok")
	res, err := cs.CallTool(ctx, params)
	require.NoError(t, err)
	require.False(t, res.IsError)
	select { // the go-sdk client hands notifications to the handler after the result
	case <-all:
	case <-ctx.Done():
		t.Fatalf("progress received: %d of %d", got.Load(), n)
	}
	require.Equal(t, int64(n), inOrder.Load(), "progress out of order")
	hw := v.Server.BackendQueueHighWater()
	require.Positive(t, hw, "the call did not go through the call core's stream")
	require.LessOrEqual(t, hw, upstream.QueueCapacity)
}
