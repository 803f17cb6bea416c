package legacy_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/dispatch/legacy"
	"github.com/vmcp/vmcp/pkg/pagination"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// completeOptions are a dispatcher's options over agg and mgr as vmcp.New
// builds them from a default config (the dispatcher fills in none).
func completeOptions(agg *aggregator.Aggregator, mgr *backends.Manager, log *slog.Logger) legacy.Options {
	m := telemetry.New()
	return legacy.Options{
		Implementation: &mcp.Implementation{Name: "vmcp"},
		MaxSessions:    10,
		Logger:         log,
		EventStore:     mcp.NewMemoryEventStore(nil),
		Codec:          pagination.NewCodec(bytes.Repeat([]byte("k"), 32)),
		ProgressGrace:  config.DefaultProgressGrace,
		Core:           upstream.New(agg, mgr, m),
		Metrics:        m,
	}
}

// Options without what vmcp.New builds from the config were taken, and the
// first client's initialize hit a nil event store (TestRelayOnDo's
// dispatcher after New stopped filling in defaults): New now refuses them
// naming each missing one.
func TestLegacyOptionsWithoutConfigDefaultsPanickedOnTheFirstRequest(t *testing.T) {
	t.Parallel()
	agg := aggregator.New(aggregator.Policy{}, nil)
	mgr := backends.NewManager(nil, agg, slog.New(slog.DiscardHandler), "test")
	opts := completeOptions(agg, mgr, slog.New(slog.DiscardHandler))
	t.Cleanup(opts.Core.Close)
	opts.EventStore, opts.ProgressGrace = nil, 0
	require.PanicsWithValue(t, "legacy: Options lack EventStore, ProgressGrace", func() { legacy.New(agg, mgr, opts) })
}
