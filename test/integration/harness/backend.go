package harness

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/config"
)

// Mode of an in-process backend.
type Mode int

const (
	// Stateful is a Legacy go-sdk server: a stateful StreamableHTTPHandler
	// with Mcp-Session-Id sessions (2025-11-25 and older only).
	Stateful Mode = iota
	// Stateless is a Modern-capable server: StreamableHTTPOptions{Stateless:
	// true}, which serves 2026-07-28 and sessionless Legacy requests.
	Stateless
	// StatelessCancelling is Stateless with PropagateRequestCancellation:
	// a 2026-07-28 request's handler ends when its stream closes, as the
	// spec requires (the go-sdk's default keeps it running).
	StatelessCancelling
)

// String names the mode as the tests print it.
func (m Mode) String() string {
	switch m {
	case Stateless:
		return "stateless"
	case StatelessCancelling:
		return "stateless-cancelling"
	}
	return "stateful"
}

// backendPath is where an in-process backend serves MCP.
const backendPath = "/mcp"

// Backend is an in-process go-sdk MCP server on a loopback httptest server.
type Backend struct {
	Name   string           // backend name in vmcp's config
	URL    string           // MCP endpoint, e.g. http://127.0.0.1:PORT/mcp
	Server *mcp.Server      // the go-sdk server; add or remove features at any time
	HTTP   *httptest.Server // the HTTP server

	mode      Mode
	closeOnce sync.Once
}

// StartBackend starts a go-sdk MCP server on httptest (loopback), registers
// features with setup (may be nil), and stops it with t.Cleanup.
func StartBackend(t testing.TB, name string, mode Mode, setup func(*mcp.Server)) *Backend {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "test"}, nil)
	if setup != nil {
		setup(srv)
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: mode != Stateful, PropagateRequestCancellation: mode == StatelessCancelling})
	mux := http.NewServeMux()
	mux.Handle(backendPath, h)
	hs := httptest.NewServer(mux)
	b := &Backend{Name: name, URL: hs.URL + backendPath, Server: srv, HTTP: hs, mode: mode}
	t.Cleanup(b.Close)
	return b
}

// Config returns a streamable-http backend config pointing at b.URL.
func (b *Backend) Config() config.Backend {
	return config.Backend{Name: b.Name, URL: b.URL, Transport: config.TransportStreamableHTTP}
}

// AwaitGETStreams waits, up to within, until b has sessions and each one's
// standalone GET stream is connected: vmcp opens its GET to a backend
// behind the go-sdk client's (backends/transport/getstream.go), so it may still be
// opening after a first call. The probe is a progress notification, which
// travels on that stream alone (vmcp counts it undeliverable: unknown token).
// A stateless backend has no GET streams: it returns at once.
func (b *Backend) AwaitGETStreams(t testing.TB, within time.Duration) {
	t.Helper()
	if b.mode == Stateful {
		AwaitGETStreams(t, b.Server, within)
	}
}

// AwaitGETStreams is Backend.AwaitGETStreams for any stateful backend
// server: a notification it sends outside a request (list_changed,
// resources/updated, a late log) before a session's GET stream is
// connected is dropped by the go-sdk, so a test sends one only after this.
func AwaitGETStreams(t testing.TB, srv *mcp.Server, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !getStreamsConnected(srv) {
		if time.Now().After(deadline) {
			t.Fatalf("backend sessions' GET streams not connected within %s", within)
		}
		<-tick.C
	}
}

// getStreamsConnected reports whether srv has sessions and every one took
// an out-of-band message.
func getStreamsConnected(srv *mcp.Server) bool {
	n := 0
	for ss := range srv.Sessions() {
		n++
		if ss.NotifyProgress(context.Background(), &mcp.ProgressNotificationParams{ProgressToken: "probe", Progress: 1}) != nil {
			return false
		}
	}
	return n > 0
}

// Close stops serving now, simulating a backend going down: open
// connections (including long-lived SSE streams) are cut, new ones are
// refused, and the server's sessions are closed. It is idempotent.
func (b *Backend) Close() {
	b.closeOnce.Do(func() {
		closeHTTP(b.HTTP)
		for ss := range b.Server.Sessions() {
			_ = ss.Close()
		}
	})
}

// closeHTTP closes hs without waiting for long-lived requests (SSE streams)
// to end by themselves: httptest.Server.Close waits for active requests, so
// connections are cut until it returns.
func closeHTTP(hs *httptest.Server) {
	done := make(chan struct{})
	go func() {
		hs.Close()
		close(done)
	}()
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for {
		hs.CloseClientConnections()
		select {
		case <-done:
			return
		case <-tick.C:
		}
	}
}
