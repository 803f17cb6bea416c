package modern_test

import (
	"bytes"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/dispatch/modern"
	"github.com/vmcp/vmcp/pkg/mrtr"
	"github.com/vmcp/vmcp/pkg/pagination"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// completeOptions are a dispatcher's options over agg and mgr as vmcp.New
// builds them from a default config (the dispatcher fills in none). The
// core is closed when the test ends (its keyed backend sessions: the
// caller owns the core, as vmcp.Server does).
func completeOptions(t testing.TB, agg *aggregator.Aggregator, mgr *backends.Manager) modern.Options {
	m := telemetry.New()
	core := upstream.New(agg, mgr, m)
	t.Cleanup(core.Close)
	return modern.Options{
		Implementation:        &mcp.Implementation{Name: "vmcp", Version: "test"},
		Codec:                 pagination.NewCodec(bytes.Repeat([]byte("k"), 32)),
		Capabilities:          func() *mcp.ServerCapabilities { return &mcp.ServerCapabilities{} },
		Logger:                slog.New(slog.DiscardHandler),
		State:                 mrtr.NewCodec(bytes.Repeat([]byte("s"), 32)),
		ParkTimeout:           config.DefaultParkTimeout,
		MaxParked:             config.DefaultMaxParked,
		MaxParkedPerPrincipal: config.DefaultMaxParked / 10,
		Parked:                mrtr.NewMemory(),
		Core:                  core,
		Metrics:               m,
	}
}

// The dispatcher fills in no defaults: options without what vmcp.New
// builds from the config are refused naming each missing one.
func TestModernOptionsWithoutConfigDefaultsAreRefused(t *testing.T) {
	t.Parallel()
	agg := aggregator.New(aggregator.Policy{}, nil)
	mgr := backends.NewManager(nil, agg, slog.New(slog.DiscardHandler), "test")
	opts := completeOptions(t, agg, mgr)
	opts.Parked, opts.MaxParked = nil, 0
	require.PanicsWithValue(t, "modern: Options lack MaxParked, Parked", func() { modern.New(agg, mgr, opts) })
}
