package backends

import (
	"context"
	"flag"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/config"
)

// The soak's length: -soak.calls calls spread over -soak.duration (the
// issue's proof runs two minutes; tests keep it short).
var (
	soakCalls    = flag.Int("soak.calls", 150, "calls per flaky-GET soak")
	soakDuration = flag.Duration("soak.duration", 600*time.Millisecond, "length of a flaky-GET soak")
)

// getMisbehaviour is how a test backend treats the standalone GET stream.
type getMisbehaviour int

const (
	getCloses    getMisbehaviour = iota // every GET stream ends after a few ms
	getReject405                        // the first GET stream ends; every reconnect gets 405
	getSilent                           // the GET is accepted and never answered
)

// flakyGETBackend is a stateful go-sdk server (tool "echo") behind a
// handler that misbehaves on GET as m says.
func flakyGETBackend(t *testing.T, m getMisbehaviour) *httptest.Server {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "flaky", Version: "test"}, nil)
	srv.AddTool(&mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
		})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var mu sync.Mutex
	seen := map[string]bool{}   // sessions whose first GET was served
	stop := make(chan struct{}) // ends silent GETs before the server closes
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet {
			sdk.ServeHTTP(w, r)
			return
		}
		switch m {
		case getSilent:
			select {
			case <-r.Context().Done():
			case <-stop:
			}
			return
		case getReject405:
			mu.Lock()
			again := seen[r.Header.Get("Mcp-Session-Id")]
			seen[r.Header.Get("Mcp-Session-Id")] = true
			mu.Unlock()
			if again {
				http.Error(w, "no GET stream", http.StatusMethodNotAllowed)
				return
			}
		}
		ctx, cancel := context.WithTimeout(r.Context(), 3*time.Millisecond)
		defer cancel()
		sdk.ServeHTTP(w, r.WithContext(ctx))
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(stop) })
	return hs
}

// soakTiming makes supervision fast enough that a soak sees many health
// probes and GET reconnects.
var soakTiming = Timing{MinBackoff: 5 * time.Millisecond, MaxBackoff: 50 * time.Millisecond,
	HealthInterval: 20 * time.Millisecond, StreamStable: 50 * time.Millisecond}

// TestFlakyGETStreamNeverMarksBackendDown pins issue 13's flips: a backend
// whose optional GET stream ends, 405s its reconnect or never answers was
// marked down (or stayed connecting) and its tools vanished. Calls on the
// control connection and on a client's backend session all succeed, the
// backend's state never changes after it is first ready, and its tool
// stays listed.
func TestFlakyGETStreamNeverMarksBackendDown(t *testing.T) {
	for name, m := range map[string]getMisbehaviour{"closes": getCloses, "405 on reconnect": getReject405, "never flushes": getSilent} {
		t.Run(name, func(t *testing.T) {
			hs := flakyGETBackend(t, m)
			agg := aggregator.New(aggregator.Policy{Strategy: config.StrategyPriority, Order: []string{"flaky"}}, slog.New(slog.DiscardHandler))
			var transitions atomic.Int64
			ready := make(chan struct{}, 1)
			mgr := NewManager([]config.Backend{{Name: "flaky", URL: hs.URL, Transport: config.TransportStreamableHTTP, Timeout: config.Duration(5 * time.Second)}},
				agg, slog.New(slog.DiscardHandler), "test", WithTiming(soakTiming), WithStateHook(func(_ string, s State) {
					transitions.Add(1)
					if s == StateReady {
						select {
						case ready <- struct{}{}:
						default:
						}
					}
				}))
			mgr.Start(0)
			t.Cleanup(func() { closeWithin(t, mgr, 5*time.Second) })
			select {
			case <-ready:
			case <-time.After(5 * time.Second):
				t.Fatalf("backend not ready: %+v", mgr.Status())
			}
			base := transitions.Load()
			b, _ := mgr.Backend("flaky")
			own, err := b.Open(context.Background(), SessionOptions{Client: &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}})
			if err != nil {
				t.Fatalf("open backend session: %v", err)
			}
			t.Cleanup(func() { _ = own.Close() })
			failed := soak(t, b, own, agg)
			if failed != 0 {
				t.Errorf("%d of %d calls failed", failed, *soakCalls)
			}
			if n := transitions.Load() - base; n != 0 {
				t.Errorf("backend state changed %d times after ready; status %+v", n, mgr.Status())
			}
		})
	}
}

// soak runs soakCalls calls over soakDuration, alternating the control
// connection and the backend session own, checking each time that "echo"
// is still listed; it returns the number of failed calls.
func soak(t *testing.T, b *Backend, own *mcp.ClientSession, agg *aggregator.Aggregator) int {
	t.Helper()
	pace := time.NewTicker(*soakDuration / time.Duration(*soakCalls))
	defer pace.Stop()
	failed := 0
	for i := range *soakCalls {
		<-pace.C
		cs := own
		if i%2 == 0 {
			shared, err := b.Shared()
			if err != nil {
				failed++
				t.Logf("call %d: %v", i, err)
				continue
			}
			cs = shared
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo"})
		cancel()
		if err != nil || res.IsError {
			failed++
			t.Logf("call %d: %v", i, err)
		}
		if _, _, ok := agg.Current().Tool("echo"); !ok {
			t.Errorf("call %d: tool echo no longer listed", i)
		}
	}
	return failed
}

// closeWithin closes mgr, failing the test if that takes longer than d (a
// supervisor stuck in a connect that never returns).
func closeWithin(t *testing.T, mgr *Manager, d time.Duration) {
	done := make(chan struct{})
	go func() { mgr.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Errorf("manager did not close within %s (a connect is stuck)", d)
	}
}

// TestControlGETStreamGapIsCoveredByRefresh: a tools/list_changed sent
// while the control connection's GET stream was down is lost by the
// backend; once vmcp reopens the stream it refreshes the catalogue, so the
// new tool is listed anyway.
func TestControlGETStreamGapIsCoveredByRefresh(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "gap", Version: "test"}, nil)
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "a", InputSchema: map[string]any{"type": "object"}}, handler)
	announced := make(chan struct{}, 1)
	srv.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "notifications/tools/list_changed" {
				announced <- struct{}{}
			}
			return res, err
		}
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	var allow atomic.Bool
	allow.Store(true)
	streams := make(chan context.CancelFunc, 8) // live GET streams, to cut
	rejected := make(chan struct{}, 64)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			if !allow.Load() {
				rejected <- struct{}{}
				http.Error(w, "not now", http.StatusServiceUnavailable)
				return
			}
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			select {
			case streams <- cancel:
			default:
			}
			r = r.WithContext(ctx)
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	listed := watchToolB(t, "gap", hs.URL)
	cut := <-streams // the control connection's GET stream is live
	allow.Store(false)
	cut()
	<-rejected // vmcp's reopening is refused: the stream is down
	srv.AddTool(&mcp.Tool{Name: "b", InputSchema: map[string]any{"type": "object"}}, handler)
	<-announced // sent to no stream: lost
	allow.Store(true)
	select {
	case <-listed:
	case <-time.After(10 * time.Second):
		t.Fatal("tool b added during the GET stream's gap never listed")
	}
}

// TestControlFirstGETStreamMissedListChanged: the control connection's
// first GET stream opens behind the go-sdk client (SteadyGET answers its
// GET at once), so the backend may still have no stream when vmcp has
// listed it; a tools/list_changed sent in that window was lost and the
// catalogue stayed stale. The first open requests a refresh too.
func TestControlFirstGETStreamMissedListChanged(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "first", Version: "test"}, nil)
	handler := func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{}, nil
	}
	srv.AddTool(&mcp.Tool{Name: "a", InputSchema: map[string]any{"type": "object"}}, handler)
	announced := make(chan struct{}, 1)
	srv.AddSendingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if method == "notifications/tools/list_changed" {
				announced <- struct{}{}
			}
			return res, err
		}
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	held, release := make(chan struct{}, 8), make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			held <- struct{}{}
			select { // the backend's stream is not open until released
			case <-release:
			case <-r.Context().Done():
				return
			}
		}
		sdk.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	listed := watchToolB(t, "first", hs.URL)
	<-held // listed, and the backend's first GET stream is not open yet
	srv.AddTool(&mcp.Tool{Name: "b", InputSchema: map[string]any{"type": "object"}}, handler)
	<-announced // sent to no stream: lost
	close(release)
	select {
	case <-listed:
	case <-time.After(10 * time.Second):
		t.Fatal("tool b added before the first GET stream opened never listed")
	}
}

// watchToolB starts a Manager on the streamable HTTP backend name at url
// (fast stream retries) and returns a channel told each time the
// catalogue holds tool "b"; it is ready when watchToolB returns.
func watchToolB(t *testing.T, name, url string) <-chan struct{} {
	t.Helper()
	agg := aggregator.New(aggregator.Policy{Strategy: config.StrategyPriority, Order: []string{name}}, slog.New(slog.DiscardHandler))
	listed := make(chan struct{}, 16)
	agg.OnChange(func(_, c *aggregator.Catalogue, _ []aggregator.Kind) {
		if _, _, ok := c.Tool("b"); ok {
			listed <- struct{}{}
		}
	})
	mgr := NewManager([]config.Backend{{Name: name, URL: url, Transport: config.TransportStreamableHTTP}},
		agg, slog.New(slog.DiscardHandler), "test", WithTiming(Timing{MinBackoff: 5 * time.Millisecond, MaxBackoff: 20 * time.Millisecond, StreamAttempts: 1000}))
	mgr.Start(0)
	t.Cleanup(func() { closeWithin(t, mgr, 5*time.Second) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := mgr.WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	return listed
}
