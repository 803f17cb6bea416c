package backends_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// Regression: /readyz listed a down backend with the tool count and
// protocol version of its lost connection, and vmcp_backend_tools kept
// counting tools the catalogue no longer had.
func TestDownBackendStillListedItsToolsAndVersion(t *testing.T) {
	be := harness.StartBackend(t, "flaky", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	states := make(chan backends.State, 64)
	mgr := backends.NewManager([]config.Backend{be.Config()}, aggregator.New(aggregator.Policy{}, slog.New(slog.DiscardHandler)),
		slog.New(slog.DiscardHandler), "test",
		backends.WithTiming(backends.Timing{MinBackoff: time.Hour, MaxBackoff: time.Hour, HealthInterval: 10 * time.Millisecond}),
		backends.WithStateHook(func(_ string, s backends.State) {
			select {
			case states <- s:
			default:
			}
		}))
	mgr.Start(0)
	t.Cleanup(mgr.Close)
	await := func(want backends.State) {
		t.Helper()
		for {
			select {
			case s := <-states:
				if s == want {
					return
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("backend never became %s", want)
			}
		}
	}
	await(backends.StateReady)
	st := mgr.Status()[0]
	assert.Equal(t, 1, st.Tools)
	assert.NotEmpty(t, st.ProtocolVersion)

	be.Close()
	await(backends.StateDown)
	st = mgr.Status()[0]
	assert.Zero(t, st.Tools, "a down backend's tools are out of the catalogue")
	assert.Empty(t, st.ProtocolVersion)
	assert.NotEmpty(t, st.Error, "the error that took it down is shown")
}
