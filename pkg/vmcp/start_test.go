package vmcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
)

// TestNewServesAtOnceAndReadyzReportsBackendsStillConnecting pins issue
// 13's start delay: vmcp did not listen until slow backends connected (up
// to 10 s). New returns while the only backend has not answered at all;
// /readyz says 503 with the backend "connecting" until it is ready, then
// 200.
func TestNewServesAtOnceAndReadyzReportsBackendsStillConnecting(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "slow", Version: "test"}, nil)
	srv.AddTool(&mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release // the backend answers nothing until released
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	var releaseOnce bool
	t.Cleanup(func() {
		if !releaseOnce {
			close(release)
		}
	})
	cfg := &config.Config{Backends: []config.Backend{{Name: "slow", URL: hs.URL, Transport: config.TransportStreamableHTTP}}}
	cfg.ApplyDefaults()
	ready := make(chan struct{}, 1)
	created := make(chan *vmcp.Server, 1)
	go func() {
		v, err := vmcp.New(cfg, vmcp.Options{OnBackendState: func(_ string, s backends.State) {
			if s == backends.StateReady {
				select {
				case ready <- struct{}{}:
				default:
				}
			}
		}})
		require.NoError(t, err)
		created <- v
	}()
	var v *vmcp.Server
	select {
	case v = <-created:
	case <-time.After(5 * time.Second):
		t.Fatal("vmcp.New still waiting for a backend that has not answered")
	}
	t.Cleanup(func() { _ = v.Close() })
	front := httptest.NewServer(v.Handler())
	t.Cleanup(front.Close)

	code, body := readyz(t, front.URL)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, backends.StateConnecting, body.Backends[0].State)

	releaseOnce = true
	close(release)
	select {
	case <-ready:
	case <-time.After(10 * time.Second):
		t.Fatal("backend never ready")
	}
	code, body = readyz(t, front.URL)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, backends.StateReady, body.Backends[0].State)
}

type readyzBody struct {
	Ready    bool              `json:"ready"`
	Backends []backends.Status `json:"backends"`
}

func readyz(t *testing.T, base string) (int, readyzBody) {
	t.Helper()
	resp, err := http.Get(base + "/readyz")
	require.NoError(t, err)
	defer resp.Body.Close()
	var b readyzBody
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&b))
	return resp.StatusCode, b
}
