package integration

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// logWatch is a slog handler keeping "msg backend=... line=..." for every
// record, with a wait for one that matches.
type logWatch struct {
	mu      sync.Mutex
	lines   []string
	changed chan struct{}
	attrs   []slog.Attr
}

func newLogWatch() *logWatch { return &logWatch{changed: make(chan struct{})} }

func (w *logWatch) Enabled(context.Context, slog.Level) bool { return true }
func (w *logWatch) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Message)
	add := func(a slog.Attr) bool { b.WriteString(" " + a.Key + "=" + a.Value.String()); return true }
	for _, a := range w.attrs {
		add(a)
	}
	r.Attrs(add)
	w.mu.Lock()
	w.lines = append(w.lines, b.String())
	close(w.changed)
	w.changed = make(chan struct{})
	w.mu.Unlock()
	return nil
}
func (w *logWatch) WithAttrs(as []slog.Attr) slog.Handler {
	return &logWatchView{w: w, attrs: as}
}
func (w *logWatch) WithGroup(string) slog.Handler { return w }

// logWatchView is a logWatch with attributes added by WithAttrs.
type logWatchView struct {
	w     *logWatch
	attrs []slog.Attr
}

func (v *logWatchView) Enabled(context.Context, slog.Level) bool { return true }
func (v *logWatchView) Handle(ctx context.Context, r slog.Record) error {
	r = r.Clone()
	r.AddAttrs(v.attrs...)
	return v.w.Handle(ctx, r)
}
func (v *logWatchView) WithAttrs(as []slog.Attr) slog.Handler {
	return &logWatchView{w: v.w, attrs: append(append([]slog.Attr(nil), v.attrs...), as...)}
}
func (v *logWatchView) WithGroup(string) slog.Handler { return v }

// await waits for a logged line containing every part.
func (w *logWatch) await(t *testing.T, parts ...string) {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		w.mu.Lock()
		for _, l := range w.lines {
			if containsAll(l, parts) {
				w.mu.Unlock()
				return
			}
		}
		ch := w.changed
		w.mu.Unlock()
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("no log line with %q", parts)
		}
	}
}

func containsAll(s string, parts []string) bool {
	for _, p := range parts {
		if !strings.Contains(s, p) {
			return false
		}
	}
	return true
}

// TestStdioBannerAndJunkLinesAreSkippedAndLogged pins issue 13's stdio
// failure: a server printing a banner ("Starting...") or junk lines on
// stdout was never usable ("invalid character 'S' looking for beginning of
// value"). Now the lines are skipped and logged with the backend's name,
// stderr too, and the backend serves both revisions.
func TestStdioBannerAndJunkLinesAreSkippedAndLogged(t *testing.T) {
	logs := newLogWatch()
	cfg := harness.StdioBackend(t, "s")
	cfg.Env = map[string]string{"STDIOSERVER_JUNK": "1"}
	v := harness.StartVMCPWithOptions(t, vmcp.Options{Logger: logr.FromSlogHandler(logs)}, nil, cfg)
	awaitTools(t, v, "s_echo")
	for _, version := range []string{legacyVersion, ""} {
		cs := v.Connect(t, version, nil)
		for i := range 3 {
			res, err := cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: "s_echo", Arguments: map[string]any{"text": "hi"}})
			require.NoError(t, err, "version %q call %d", version, i)
			require.Equal(t, "hi", res.Content[0].(*mcp.TextContent).Text)
		}
	}
	logs.await(t, "not JSON-RPC", "backend=s", "line=Starting stdioserver...")
	logs.await(t, "not JSON-RPC", "backend=s", "line=echo: hi")
	logs.await(t, "backend stderr", "backend=s", "line=stdioserver: stderr is for logs")
}

// TestStdioMaxProcessesRefusesBeyondTheLimit: with max_processes: 2, a
// third Legacy client session's first call to the stdio backend fails with
// an error naming the limit; once a session ends, its process is gone and
// the next client gets one.
func TestStdioMaxProcessesRefusesBeyondTheLimit(t *testing.T) {
	cfg := harness.StdioBackend(t, "s")
	cfg.MaxProcesses = 2
	v := harness.StartVMCP(t, nil, cfg)
	awaitTools(t, v, "s_whoami")
	whoami := func(cs *mcp.ClientSession) (*mcp.CallToolResult, error) {
		return cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: "s_whoami"})
	}
	first := v.Connect(t, legacyVersion, nil)
	for _, cs := range []*mcp.ClientSession{first, v.Connect(t, legacyVersion, nil)} {
		res, err := whoami(cs)
		require.NoError(t, err)
		require.False(t, res.IsError)
	}
	third := v.Connect(t, legacyVersion, nil)
	res, err := whoami(third)
	if err == nil {
		require.True(t, res.IsError, "third process allowed")
		err = errorText(res)
	}
	require.ErrorContains(t, err, "max_processes: 2")
	require.NoError(t, first.Close()) // DELETE: its backend process ends
	// The Legacy dispatcher closes an ended session's backend sessions
	// after the DELETE has been answered, with no event to wait on; a call
	// refused at the limit opens nothing, so it is simply retried.
	fourth := v.Connect(t, legacyVersion, nil)
	require.Eventually(t, func() bool {
		res, err := whoami(fourth)
		return err == nil && !res.IsError
	}, stateWait, 20*time.Millisecond, "a process slot was not released")
}

// errorText is a tool error result's text as an error.
func errorText(res *mcp.CallToolResult) error {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return errors.New(b.String())
}

// TestStdioSharedIsolationRunsOneProcessForAllClients: with isolation:
// shared, two Legacy client sessions and a Modern client reach the same
// process (one "whoami" id), and the backend's roots/list, which cannot be
// attributed to one client over the shared process, is refused with an
// error naming the isolation.
func TestStdioSharedIsolationRunsOneProcessForAllClients(t *testing.T) {
	cfg := harness.LegacyStdioBackend(t, "s")
	cfg.Isolation = config.IsolationShared
	v := harness.StartVMCP(t, nil, cfg)
	awaitTools(t, v, "s_whoami")
	ids := map[string]bool{}
	clients := []*mcp.ClientSession{v.Connect(t, legacyVersion, nil), v.Connect(t, legacyVersion, nil), v.Connect(t, "", nil)}
	for _, cs := range clients {
		res, err := cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: "s_whoami"})
		require.NoError(t, err)
		ids[res.Content[0].(*mcp.TextContent).Text] = true
	}
	require.Len(t, ids, 1, "processes seen: %v", ids)
	withRoots := v.Connect(t, legacyVersion, &mcp.ClientOptions{})
	res, err := withRoots.CallTool(flowCtx(t), &mcp.CallToolParams{Name: "s_roots"})
	if err == nil {
		require.True(t, res.IsError, "roots/list answered over a shared process")
		err = errorText(res)
	}
	require.ErrorContains(t, err, "isolation: shared")
}
