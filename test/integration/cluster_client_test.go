package integration

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// clClient is a go-sdk client session whose notifications are counted.
type clClient struct {
	cs          *mcp.ClientSession
	listChanged chan struct{}
	progress    chan float64
}

// clConnect connects a client to endpoint. version "" is the SDK default
// (Modern first); withGET false disables the standalone GET stream. hc
// may be nil.
func clConnect(t testing.TB, endpoint, version string, withGET bool, hc *http.Client) *clClient {
	t.Helper()
	c := &clClient{listChanged: make(chan struct{}, 100), progress: make(chan float64, 100)}
	client := mcp.NewClient(&mcp.Implementation{Name: "cluster-client", Version: "test"}, &mcp.ClientOptions{
		Capabilities:                &mcp.ClientCapabilities{},
		ToolListChangedHandler:      func(context.Context, *mcp.ToolListChangedRequest) { c.listChanged <- struct{}{} },
		ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { c.progress <- r.Params.Progress },
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"name": "ada"}}, nil
		},
	})
	if hc == nil {
		hc = &http.Client{}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc, DisableStandaloneSSE: !withGET},
		&mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	c.cs = cs
	return c
}

// echo calls alpha_echo and returns its text.
func (c *clClient) echo(t testing.TB, text string) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := c.cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha_echo", Arguments: map[string]any{"text": text}})
	if err != nil {
		return "", err
	}
	return harness.Text(t, res), nil
}

// awaitListChanged waits for n more tools/list_changed notifications.
func (c *clClient) awaitListChanged(t testing.TB, n int, within time.Duration) {
	t.Helper()
	deadline := time.After(within)
	for i := range n {
		select {
		case <-c.listChanged:
		case <-deadline:
			t.Fatalf("got %d of %d tools/list_changed within %s", i, n, within)
		}
	}
}

// noMore fails if a list_changed notification arrives within d.
func (c *clClient) noMore(t testing.TB, d time.Duration) {
	t.Helper()
	select {
	case <-c.listChanged:
		t.Fatalf("an unexpected extra tools/list_changed")
	case <-time.After(d):
	}
}
