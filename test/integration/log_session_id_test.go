package integration

import (
	"log/slog"
	"net/http"
	"testing"

	"github.com/go-logr/logr"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestLogLinesPrintedFullSessionIDs pins log lines that named a Legacy
// client session by its whole Mcp-Session-Id, a bearer-like value: the
// line of an ignored notification now names it by telemetry.SessionTag (8
// hex digits of its SHA-256), and no line carries the id.
func TestLogLinesPrintedFullSessionIDs(t *testing.T) {
	t.Parallel()
	logs := &logBuffer{}
	h := slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})
	v := harness.StartVMCPWithOptions(t, vmcp.Options{Logger: logr.FromSlogHandler(h)}, nil, harness.StdioBackend(t, "local"))
	awaitTools(t, v, "local_echo")
	a := v.Connect(t, legacy, nil)
	id := a.ID()
	require.NotEmpty(t, id)
	status, _ := post(t, v, map[string]string{"Mcp-Session-Id": id}, []byte(`{"jsonrpc":"2.0","method":"notifications/vmcp_test_unknown"}`))
	require.Equal(t, http.StatusAccepted, status)
	tag := telemetry.SessionTag(id)
	require.Len(t, tag, 8)
	require.Contains(t, logs.String(), "session="+tag, "the ignored notification's line names the session by its tag")
	require.NotContains(t, logs.String(), id, "a log line carries the full session id")
}
