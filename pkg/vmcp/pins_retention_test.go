package vmcp_test

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// pinClock is the injected clock of pin retention.
type pinClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *pinClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *pinClock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// expiredPins is vmcp_tool_changes_total{backend,outcome="expired"}.
func expiredPins(t *testing.T, s *vmcp.Server, backend string) float64 {
	t.Helper()
	fams, err := s.Metrics().Registry.Gather()
	require.NoError(t, err)
	for _, f := range fams {
		if f.GetName() != "vmcp_tool_changes_total" {
			continue
		}
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["backend"] == backend && labels["outcome"] == "expired" {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// reloadBackends reloads v with backends bs (defaults applied).
func reloadBackends(t *testing.T, v *harness.VMCP, bs ...*harness.Backend) {
	t.Helper()
	cfg := &config.Config{Listen: "127.0.0.1:0"}
	for _, b := range bs {
		cfg.Backends = append(cfg.Backends, b.Config())
	}
	cfg.ApplyDefaults()
	v.Server.Reload(cfg, vmcp.ReloadAPI)
}

// A backend a reload removes keeps its pins for security.pin_retention
// (30 days by default), then they are deleted (counted as expired) at
// the next retain, here an added backend's first listing.
func TestRemovedBackendPinsExpireAfterRetention(t *testing.T) {
	t.Parallel()
	clk := &pinClock{now: time.Unix(1_700_000_000, 0)}
	start := func(name string) *harness.Backend {
		return harness.StartBackend(t, name, harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	}
	alpha, beta, gamma, delta := start("alpha"), start("beta"), start("gamma"), start("delta")
	v := harness.StartVMCPWithOptions(t, vmcp.Options{PinNow: clk.Now}, nil, alpha.Config(), beta.Config())
	awaitBackends(t, v.Server)
	reloadBackends(t, v, alpha)
	clk.Add(config.DefaultPinRetention - 24*time.Hour)
	reloadBackends(t, v, alpha, gamma)
	awaitBackends(t, v.Server)
	require.Zero(t, expiredPins(t, v.Server, "beta"), "within the retention: beta's pins kept")
	changed := make(chan struct{}, 16)
	cs := v.Connect(t, "2025-11-25", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	clk.Add(48 * time.Hour)
	reloadBackends(t, v, alpha, gamma, delta)
	for !slices.Contains(harness.ToolNames(t, cs), "delta_echo") { // listed: admitted (and retained) first
		select {
		case <-changed:
		case <-time.After(20 * time.Second): // a failure guard
			t.Fatal("delta's tools never listed")
		}
	}
	require.Equal(t, 1.0, expiredPins(t, v.Server, "beta"), "past the retention: beta's one pin deleted")
}
