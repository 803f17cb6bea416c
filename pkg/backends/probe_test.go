package backends_test

import (
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// The Modern health probe was a first tools/list page: with a backend of
// thousands of tools each probe cost vmcp megabytes of decoding (and the
// go-sdk client's validation of every tool). It is now server/discover,
// sent directly; tools/list is asked only to build the catalogue.
func TestModernHealthProbeIsDiscoverNotAToolsListPage(t *testing.T) {
	var lists, discovers atomic.Int64
	probed := make(chan struct{}, 1)
	srv := mcp.NewServer(&mcp.Implementation{Name: "big", Version: "test"}, nil)
	harness.AddTools(srv, "t", 3)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Mcp-Method") { // every Modern request names its method
		case "tools/list":
			lists.Add(1)
		case "server/discover":
			if discovers.Add(1) >= 5 {
				select {
				case probed <- struct{}{}:
				default:
				}
			}
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	cfg := config.Backend{Name: "big", URL: hs.URL, Transport: config.TransportStreamableHTTP}
	mgr := backends.NewManager([]config.Backend{cfg}, aggregator.New(aggregator.Policy{}, slog.New(slog.DiscardHandler)),
		slog.New(slog.DiscardHandler), "test",
		backends.WithTiming(backends.Timing{MinBackoff: time.Hour, MaxBackoff: time.Hour, HealthInterval: 5 * time.Millisecond}))
	mgr.Start(0)
	t.Cleanup(mgr.Close)
	select {
	case <-probed:
	case <-time.After(10 * time.Second):
		t.Fatalf("no 5 server/discover probes within 10s (%d discovers, %d tools/list): %+v", discovers.Load(), lists.Load(), mgr.Status())
	}
	require.Equal(t, "ready", string(mgr.Status()[0].State))
	require.LessOrEqual(t, lists.Load(), int64(2), "tools/list only for the catalogue, not per probe")
}
