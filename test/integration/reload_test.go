package integration

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// sessionBackend is a Legacy (stateful) go-sdk backend on httptest that
// records every backend session it created and every one a DELETE ended.
type sessionBackend struct {
	name    string
	url     string
	mu      sync.Mutex
	created map[string]bool
	deleted map[string]bool
	change  chan struct{} // a session was deleted (cap 1, coalescing)
}

func startSessionBackend(t *testing.T, name string, setup func(*mcp.Server)) *sessionBackend {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "test"}, nil)
	setup(srv)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	b := &sessionBackend{name: name, created: map[string]bool{}, deleted: map[string]bool{}, change: make(chan struct{}, 1)}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodDelete {
			b.mu.Lock()
			b.deleted[r.Header.Get("Mcp-Session-Id")] = true
			b.mu.Unlock()
			select {
			case b.change <- struct{}{}:
			default:
			}
		}
		h.ServeHTTP(w, r)
		if id := w.Header().Get("Mcp-Session-Id"); id != "" && r.Method == http.MethodPost {
			b.mu.Lock()
			b.created[id] = true
			b.mu.Unlock()
		}
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() }) // GET streams would hold Close
	b.url = hs.URL + "/mcp"
	return b
}

func (b *sessionBackend) config() config.Backend {
	return config.Backend{Name: b.name, URL: b.url, Transport: config.TransportStreamableHTTP}
}

// open is how many sessions the backend created that no DELETE ended.
func (b *sessionBackend) open() (created, open int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for id := range b.created {
		if !b.deleted[id] {
			open++
		}
	}
	return len(b.created), open
}

// awaitAllDeleted waits until every session the backend created was deleted.
func (b *sessionBackend) awaitAllDeleted(t *testing.T) int {
	t.Helper()
	deadline := time.After(20 * time.Second)
	for {
		created, open := b.open()
		if open == 0 {
			return created
		}
		select {
		case <-b.change:
		case <-deadline:
			t.Fatalf("backend %s: %d of %d sessions never deleted", b.name, open, created)
		}
	}
}

// withBackends is cfg with backends bs (cfg itself unchanged).
func withBackends(cfg *config.Config, bs ...config.Backend) *config.Config {
	next := *cfg
	next.Backends = bs
	return &next
}

// connectNotified opens a Legacy client session whose tools list_changed
// notifications are sent on the returned channel.
func connectNotified(t *testing.T, v *harness.VMCP) (*mcp.ClientSession, <-chan struct{}) {
	changed := make(chan struct{}, 16)
	cs := v.Connect(t, "2025-11-25", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	return cs, changed
}

// The proof of live reload: a reload that adds one backend and removes
// another while a Legacy client keeps calling a tool of a third: no call
// fails, the client gets exactly one tools list_changed, the added
// backend's tool is callable, the removed one's is gone, and every backend
// session on the removed backend (the client's and vmcp's own) is closed.
func TestReloadAddsAndRemovesBackendsWithoutDroppingCalls(t *testing.T) {
	keep := startSessionBackend(t, "keep", func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	gone := startSessionBackend(t, "gone", func(s *mcp.Server) { harness.AddEcho(s, "bye") })
	fresh := startSessionBackend(t, "fresh", func(s *mcp.Server) { harness.AddEcho(s, "hi") })
	v := harness.StartVMCP(t, nil, keep.config(), gone.config())
	cs, changed := connectNotified(t, v)
	require.Equal(t, "bye:x", callText(t, cs, "gone_bye", "x"), "the client has a backend session on gone")

	var calls, failed atomic.Int64
	stop, looped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(looped)
		for {
			select {
			case <-stop:
				return
			default:
			}
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "keep_echo", Arguments: map[string]any{"text": "x"}})
			calls.Add(1)
			if err != nil || res.IsError {
				failed.Add(1)
				t.Logf("call failed during reload: %v %+v", err, res)
			}
		}
	}()
	rec := v.Server.Reload(withBackends(v.Config, keep.config(), fresh.config()), vmcp.ReloadAPI)
	require.Equal(t, vmcp.ReloadOK, rec.Outcome, "%+v", rec)
	require.Equal(t, []string{"fresh"}, rec.Added)
	require.Equal(t, []string{"gone"}, rec.Removed)
	require.Empty(t, rec.Changed, "keep's config is the same")
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no tools list_changed after the reload")
	}
	require.Equal(t, "hi:y", callText(t, cs, "fresh_hi", "y"), "the added backend's tool is callable")
	_, err := call(t, cs, "gone_bye", "x")
	require.Error(t, err, "the removed backend's tool is gone")
	require.Equal(t, 2, gone.awaitAllDeleted(t), "vmcp's control connection and the client's backend session on gone, both closed")
	_ = callText(t, cs, "keep_echo", "after") // one more round trip through the same session
	close(stop)
	<-looped
	require.Positive(t, calls.Load())
	require.Zero(t, failed.Load(), "no call failed during the reload")
	require.Len(t, changed, 0, "exactly one tools list_changed")
	names := harness.ToolNames(t, cs)
	require.ElementsMatch(t, []string{"keep_echo", "fresh_hi"}, names)
	require.Equal(t, 1.0, testutil.ToFloat64(v.Server.Metrics().ConfigReloads.WithLabelValues("ok")))
	require.Equal(t, "ok", v.Server.Status().Reloads[0].Outcome, "the reload is on /status")
}

// A call in flight on a backend a reload removes finishes: the backend is
// drained before its sessions close.
func TestReloadDrainsCallsInFlightOnRemovedBackend(t *testing.T) {
	entered, release := make(chan struct{}), make(chan struct{})
	released := sync.OnceFunc(func() { close(release) })
	keep := startSessionBackend(t, "keep", func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	gone := startSessionBackend(t, "gone", func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "slow", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(entered)
			<-release
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "done"}}}, nil
		})
	})
	v := harness.StartVMCPWithOptions(t, vmcp.Options{BackendTiming: backends.Timing{RetireGrace: time.Millisecond}}, nil, keep.config(), gone.config())
	t.Cleanup(released) // runs first: a failed test must not leave the handler blocked (Close waits for it)
	cs := v.Connect(t, "2025-11-25", nil)
	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	got := make(chan outcome, 1)
	go func() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "gone_slow", Arguments: map[string]any{}})
		got <- outcome{res, err}
	}()
	<-entered
	rec := v.Server.Reload(withBackends(v.Config, keep.config()), vmcp.ReloadAPI)
	require.Equal(t, []string{"gone"}, rec.Removed)
	select { // long past the retire grace: a backend not drained would be closing its sessions now
	case <-gone.change:
		t.Fatal("a session of gone was deleted while its call was in flight")
	case <-time.After(300 * time.Millisecond):
	}
	_, open := gone.open()
	require.Equal(t, 2, open, "gone's sessions stay open while its call is in flight")
	released()
	o := <-got
	require.NoError(t, o.err)
	require.Equal(t, "done", harness.Text(t, o.res))
	gone.awaitAllDeleted(t)
}

// A backend whose config changed is replaced: the client's next call goes
// to the new server (its session on the old one is closed), and a Modern
// listen stream is told about the change too (both revisions).
func TestReloadReplacesChangedBackend(t *testing.T) {
	old := startSessionBackend(t, "be", func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	repl := startSessionBackend(t, "be", func(s *mcp.Server) { harness.AddEcho(s, "echo"); harness.AddEcho(s, "more") })
	v := harness.StartVMCP(t, nil, old.config())
	ls := openListenStream(t, v, `"R1"`, map[string]any{"toolsListChanged": true})
	cs, changed := connectNotified(t, v)
	require.Equal(t, "echo:a", callText(t, cs, "be_echo", "a"))

	rec := v.Server.Reload(withBackends(v.Config, repl.config()), vmcp.ReloadAPI)
	require.Equal(t, []string{"be"}, rec.Changed)
	m := ls.next(t)
	require.Equal(t, "notifications/tools/list_changed", m["method"], "the Modern listener is told")
	select {
	case <-changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no tools list_changed after the reload")
	}
	require.Equal(t, "more:b", callText(t, cs, "be_more", "b"), "the new server's tool")
	require.Equal(t, "echo:c", callText(t, cs, "be_echo", "c"))
	require.Equal(t, 2, old.awaitAllDeleted(t), "the old server's sessions (vmcp's and the client's) are closed")
	created, open := repl.open()
	require.Equal(t, 2, created, "the client's backend session moved to the new server")
	require.Equal(t, 2, open)
}

// Regression: the parked-session pool was keyed by backend name, so after
// a reload replaced a Legacy backend (here: a new URL) a Modern client's
// call reused an idle session opened on the retired one and reached the
// old server.
func TestModernCallAfterReloadReachedTheReplacedBackend(t *testing.T) {
	says := func(word string) func(*mcp.Server) {
		return func(s *mcp.Server) {
			s.AddTool(&mcp.Tool{Name: "who", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return textResultOf(word), nil
			})
		}
	}
	old := startSessionBackend(t, "be", says("old"))
	repl := startSessionBackend(t, "be", says("new"))
	v := harness.StartVMCP(t, nil, old.config())
	cs := v.Connect(t, "", nil) // Modern: a Legacy HTTP backend's call runs on a pooled session
	res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "be_who"})
	require.NoError(t, err)
	require.Equal(t, "old", harness.Text(t, res))

	rec := v.Server.Reload(withBackends(v.Config, repl.config()), vmcp.ReloadAPI)
	require.Equal(t, []string{"be"}, rec.Changed)
	res, err = cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "be_who"})
	require.NoError(t, err)
	require.Equal(t, "new", harness.Text(t, res), "the call reaches the backend the config names now")
}
