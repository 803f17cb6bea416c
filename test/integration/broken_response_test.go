package integration

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// Regression: a Modern client's call to a Legacy HTTP backend ran on the
// backend's control connection, so one response the go-sdk client could
// not decode (an empty 200 body) closed that connection: the backend went
// down, and every client's calls to its tools failed with "unknown tool"
// until it reconnected. One client calling the broken tool in a loop kept
// it down.
func TestUndecodableResponseTookTheBackendDownForEveryone(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "hb", Version: "test"}, nil)
	harness.AddEcho(srv, "echo")
	srv.AddTool(&mcp.Tool{Name: "broken", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResultOf("never sent"), nil
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var broken atomic.Int64
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		if bytes.Contains(body, []byte(`"name":"broken"`)) {
			broken.Add(1)
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusOK) // and no body
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	var downs atomic.Int64
	v := harness.StartVMCPWithOptions(t, vmcp.Options{OnBackendState: func(_ string, s backends.State) {
		if s == backends.StateDown {
			downs.Add(1)
		}
	}}, nil, config.Backend{Name: "hb", URL: hs.URL, Transport: config.TransportStreamableHTTP})
	awaitTools(t, v, "hb_echo", "hb_broken")
	bad, good := v.Connect(t, "", nil), v.Connect(t, "", nil)
	for i := range 5 {
		_, err := bad.CallTool(ctx(t), &mcp.CallToolParams{Name: "hb_broken"})
		require.Error(t, err, "round %d: the broken call fails", i)
		require.Equal(t, "echo:ok", callText(t, good, "hb_echo", "ok"), "round %d: the other client's call works", i)
	}
	assert.EqualValues(t, 5, broken.Load())
	assert.Zero(t, downs.Load(), "the backend never went down")
}
