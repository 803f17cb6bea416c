package integration

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"github.com/go-logr/logr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// floodForeign is how many progress notifications with a token no call
// sent the "foreign" tool sends before its result.
const floodForeign = 1000

// TestForeignProgressFloodLoggedOncePerMessage pins the log flood: a
// backend sending progress with a token nobody sent got one WARN line per
// message (100,000 lines for 100,000 notifications), on both revisions.
// Each is still counted; the log lines come at a bounded rate (a burst,
// then one a second), so here far fewer than the messages.
func TestForeignProgressFloodLoggedOncePerMessage(t *testing.T) {
	b := harness.StartBackend(t, "fl", harness.Stateful, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "foreign", InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			for i := range floodForeign {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "nobody-sent-this", Progress: float64(i)}); err != nil {
					return nil, err
				}
			}
			return flowResult("flooded"), nil
		})
	})
	logs := &logBuffer{}
	v := harness.StartVMCPWithOptions(t, vmcp.Options{Logger: logr.FromSlogHandler(slog.NewTextHandler(logs, nil))}, nil, b.Config())
	awaitTools(t, v, "fl_foreign")
	undeliverable := v.Server.Metrics().Undeliverable.WithLabelValues("notifications/progress")
	for _, client := range []string{"legacy", "modern"} {
		var fc *flowClient
		if client == "legacy" {
			fc = connectFlow(t, v, "p", nil)
		} else {
			fc = connectModern(t, v, "p", nil)
		}
		before, lines := testutil.ToFloat64(undeliverable), strings.Count(logs.String(), "message not delivered")
		res, err := fc.call(flowCtx(t), "fl_foreign", nil, "mine")
		require.Equal(t, "flooded", flowText(res, err), client)
		require.Equal(t, float64(floodForeign), testutil.ToFloat64(undeliverable)-before, "%s: every dropped message is counted", client)
		logged := strings.Count(logs.String(), "message not delivered") - lines
		require.Less(t, logged, floodForeign/10, fmt.Sprintf("%s: %d log lines for %d undeliverable messages", client, logged, floodForeign))
	}
}
