package integration

import (
	"context"
	"flag"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// The soak's length (the proof runs two minutes of calls; tests
// keep it short): -soak.calls calls per client over -soak.duration.
var (
	soakCalls    = flag.Int("soak.calls", 60, "calls per client in the flaky-GET soak")
	soakDuration = flag.Duration("soak.duration", 600*time.Millisecond, "length of the flaky-GET soak")
)

// flakyGET wraps a go-sdk stateful handler: mode "closes" ends every GET
// stream after 3 ms, "405" ends the first and answers every reconnect with
// 405, "silent" accepts the GET and never answers it.
func flakyGET(t *testing.T, mode string, srv *mcp.Server) *httptest.Server {
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	seen := map[string]bool{}
	stop := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			sdk.ServeHTTP(w, r)
			return
		}
		switch mode {
		case "silent":
			select {
			case <-r.Context().Done():
			case <-stop:
			}
			return
		case "405":
			mu.Lock()
			again := seen[r.Header.Get("Mcp-Session-Id")]
			seen[r.Header.Get("Mcp-Session-Id")] = true
			mu.Unlock()
			if again {
				http.Error(w, "no GET stream", http.StatusMethodNotAllowed)
				return
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Millisecond)
		defer cancel()
		sdk.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(stop) })
	return hs
}

// TestFlakyBackendGETStreamsThroughVMCP is issue 13's proof for GET
// streams end to end: behind vmcp, backends whose GET stream closes every
// few ms, 405s its reconnect, or never answers serve a Legacy and a Modern
// client with zero failed calls and zero backend state changes, and their
// tool stays listed (before, 7 of 360 calls failed with "unknown tool"
// over 12 down/up flips, and the silent backend never connected).
func TestFlakyBackendGETStreamsThroughVMCP(t *testing.T) {
	var cfgs []config.Backend
	for _, mode := range []string{"closes", "405", "silent"} {
		srv := mcp.NewServer(&mcp.Implementation{Name: mode, Version: "test"}, nil)
		srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
		name := map[string]string{"closes": "closes", "405": "rejects", "silent": "silent"}[mode]
		cfgs = append(cfgs, config.Backend{Name: name, URL: flakyGET(t, mode, srv).URL, Transport: config.TransportStreamableHTTP})
	}
	var transitions atomic.Int64
	var soaking atomic.Bool
	opts := vmcp.Options{
		BackendTiming: backends.Timing{MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
			HealthInterval: 20 * time.Millisecond, StreamStable: 50 * time.Millisecond},
		OnBackendState: func(string, backends.State) {
			if soaking.Load() {
				transitions.Add(1)
			}
		},
	}
	v := harness.StartVMCPWithOptions(t, opts, nil, cfgs...)
	tools := []string{"closes_echo", "rejects_echo", "silent_echo"}
	awaitTools(t, v, tools...)
	soaking.Store(true)
	clients := []*mcp.ClientSession{v.Connect(t, legacyVersion, nil), v.Connect(t, "", nil)}
	pace := time.NewTicker(*soakDuration / time.Duration(*soakCalls))
	defer pace.Stop()
	failed := 0
	for i := range *soakCalls {
		<-pace.C
		for ci, cs := range clients {
			name := tools[(i+ci)%len(tools)]
			res, err := cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: name})
			if err != nil || res.IsError {
				failed++
				t.Logf("client %d call %d (%s): %v", ci, i, name, err)
			}
		}
	}
	require.Zero(t, failed, "failed calls of %d", 2**soakCalls)
	require.Zero(t, transitions.Load(), "backend state changes during the soak")
	res, err := clients[0].ListTools(flowCtx(t), nil)
	require.NoError(t, err)
	require.Len(t, res.Tools, 3)
}
