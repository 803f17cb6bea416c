package legacy_test

import (
	"bytes"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
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
