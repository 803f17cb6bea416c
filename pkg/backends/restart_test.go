package backends_test

import (
	"log/slog"
	"testing"
	"time"

	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestStdioProcessThatKeepsDyingIsRestartedWithBackoff pins issue 13's
// respawn loop (8 restarts in 20 s): a process that dies soon after each
// connect is restarted after a doubling delay, not the minimum every time.
// The stdio server exits on its first health probe (a ping).
func TestStdioProcessThatKeepsDyingIsRestartedWithBackoff(t *testing.T) {
	cfg := harness.LegacyStdioBackend(t, "dying")
	cfg.Env["STDIOSERVER_DIE_ON_PING"] = "1"
	cfg.Timeout = config.Duration(5 * time.Second)
	downs := make(chan time.Time, 64)
	mgr := backends.NewManager([]config.Backend{cfg}, aggregator.New(aggregator.Policy{}, slog.New(slog.DiscardHandler)),
		slog.New(slog.DiscardHandler), "test",
		backends.WithTiming(backends.Timing{MinBackoff: 50 * time.Millisecond, MaxBackoff: time.Second,
			HealthInterval: 10 * time.Millisecond, ConnStable: time.Hour}),
		backends.WithStateHook(func(_ string, s backends.State) {
			if s == backends.StateDown {
				select {
				case downs <- time.Now():
				default:
				}
			}
		}))
	mgr.Start(0)
	t.Cleanup(mgr.Close)
	var at []time.Time
	for len(at) < 5 {
		select {
		case d := <-downs:
			at = append(at, d)
		case <-time.After(20 * time.Second):
			t.Fatalf("only %d deaths seen", len(at))
		}
	}
	// Between the first and the fifth death the supervisor waited at least
	// 50+100+200+400 ms; restarting after the minimum would take ~4×50 ms
	// plus four process starts.
	if gap := at[4].Sub(at[0]); gap < 750*time.Millisecond {
		t.Errorf("5 deaths within %s: restarts are not backing off", gap)
	}
}
