package vmcp_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// messages passes every log message on, without blocking the logger.
type messages chan string

func (m messages) Enabled(context.Context, slog.Level) bool { return true }
func (m messages) Handle(_ context.Context, r slog.Record) error {
	select {
	case m <- r.Message:
	default:
	}
	return nil
}
func (m messages) WithAttrs([]slog.Attr) slog.Handler { return m }
func (m messages) WithGroup(string) slog.Handler      { return m }

// await waits for a message starting with prefix.
func (m messages) await(t *testing.T, prefix string) {
	t.Helper()
	timeout := time.After(auditWait)
	for {
		select {
		case msg := <-m:
			if strings.HasPrefix(msg, prefix) {
				return
			}
		case <-timeout:
			t.Fatalf("no log message %q", prefix)
		}
	}
}

// auditedEcho starts alpha (echo) behind a vmcp with an audit log at path.
func auditedEcho(t *testing.T, path string, opts vmcp.Options) *harness.VMCP {
	alpha := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	return harness.StartVMCPWithOptions(t, opts, func(c *config.Config) { c.Audit = &config.Audit{Path: path} }, alpha.Config())
}

// echoLines counts the alpha_echo call records in the file at path.
func echoLines(t *testing.T, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return strings.Count(string(b), `"tool":"alpha_echo"`)
}

// rotate makes one call, renames the log, has reopen run, makes another
// call: the first record stays in the renamed file, the second is in a
// new file at the path.
func rotate(t *testing.T, v *harness.VMCP, sink *auditSink, path string, reopen func()) {
	cs := v.Connect(t, "", nil)
	echo := auditOf("tools/call", "tool", "alpha_echo", "modern")
	_, err := callTool(t, cs, "alpha_echo", map[string]any{"text": "before"})
	require.NoError(t, err)
	sink.await(t, "before the rotation", 1, echo)
	require.NoError(t, os.Rename(path, path+".1"))
	reopen()
	_, err = callTool(t, cs, "alpha_echo", map[string]any{"text": "after"})
	require.NoError(t, err)
	sink.await(t, "after the rotation", 2, echo)
	assert.Equal(t, 1, echoLines(t, path+".1"), "the record before the rotation, in the renamed file")
	assert.Equal(t, 1, echoLines(t, path), "the record after it, in a new file at the path")
}

// Server.ReopenAudit follows a log rotation (the file renamed away).
func TestAuditLogReopenedAfterRename(t *testing.T) {
	sink, path := newAuditSink(), filepath.Join(t.TempDir(), "audit.log")
	v := auditedEcho(t, path, vmcp.Options{AuditOpen: sink.open})
	rotate(t, v, sink, path, func() { require.NoError(t, v.Server.ReopenAudit()) })
}

// SIGHUP (as vmcp serve hands it to Watch) reopens the audit log before
// it reloads the config.
func TestAuditLogReopenedOnSIGHUP(t *testing.T) {
	dir := t.TempDir()
	sink, path, cfgPath := newAuditSink(), filepath.Join(dir, "audit.log"), filepath.Join(dir, "vmcp.yaml")
	require.NoError(t, os.WriteFile(cfgPath, []byte("{"), 0o600)) // a reload is rejected: the running config stays
	logs := make(messages, 64)
	v := auditedEcho(t, path, vmcp.Options{AuditOpen: sink.open, Logger: logr.FromSlogHandler(logs)})
	hup := make(chan os.Signal, 1)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	require.NoError(t, v.Server.Watch(ctx, cfgPath, hup))
	rotate(t, v, sink, path, func() {
		hup <- syscall.SIGHUP
		logs.await(t, "config reload") // reloads after the reopen
	})
}

// stuckFile is an audit file whose writes wait until release is closed;
// entered receives a value when the first write begins.
type stuckFile struct {
	once    sync.Once
	entered chan struct{}
	release chan struct{}
}

func (f *stuckFile) Write(b []byte) (int, error) {
	f.once.Do(func() { close(f.entered) })
	<-f.release
	return len(b), nil
}

func (f *stuckFile) Close() error { return nil }

// An audit log whose file does not take writes never holds a request:
// the records that do not fit the queue are dropped, counted in
// vmcp_audit_records_dropped_total and logged.
func TestAuditLogStuckFileNeverBlocksRequests(t *testing.T) {
	file := &stuckFile{entered: make(chan struct{}), release: make(chan struct{})}
	logs := make(messages, 64)
	v := auditedEcho(t, "unused", vmcp.Options{AuditQueue: 1, Logger: logr.FromSlogHandler(logs),
		AuditOpen: func(string) (io.WriteCloser, error) { return file, nil }})
	t.Cleanup(func() { close(file.release) }) // before the server closes (its log writes what it holds)
	list := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	hdr := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/list"}
	require.Equal(t, http.StatusOK, send(t, http.MethodPost, v.URL, list, hdr).status)
	<-file.entered // the writer is stuck on the first record
	for range 3 {  // one more fits the queue; the others are dropped, and the requests are served
		require.Equal(t, http.StatusOK, send(t, http.MethodPost, v.URL, list, hdr).status)
	}
	logs.await(t, "audit log: queue full")
	served, err := testutil.GatherAndCount(v.Server.Metrics().Registry, "vmcp_audit_records_dropped_total", "vmcp_audit_write_errors_total")
	require.NoError(t, err)
	require.Equal(t, 2, served, "both audit counters are served")
	mfs, err := v.Server.Metrics().Registry.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == "vmcp_audit_records_dropped_total" {
			assert.GreaterOrEqual(t, mf.GetMetric()[0].GetCounter().GetValue(), 1.0)
		}
	}
}
