package integration

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
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
