package session_test

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/backends/session"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// forget is a notification the test backend answers 404, as a backend
// that no longer knows the session does, while keeping the session.
const forget = `{"jsonrpc":"2.0","method":"notifications/test/forget"}`

// backend is a Legacy go-sdk server over streamable HTTP that answers
// forget with 404 and reports the X-Tenant header of every initialize.
func backend(t *testing.T) (url string, tenants <-chan string) {
	t.Helper()
	seen := make(chan string, 8)
	srv := mcp.NewServer(&mcp.Implementation{Name: "b", Version: "test"}, nil)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if bytes.Equal(body, []byte(forget)) {
				http.NotFound(w, r)
				return
			}
			if bytes.Contains(body, []byte(`"initialize"`)) {
				seen <- r.Header.Get("X-Tenant")
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL, seen
}

// manager is a started Manager of the one backend "b" at url, ready.
func manager(t *testing.T, url string) *backends.Manager {
	t.Helper()
	cfg := config.Backend{Name: "b", URL: url, Transport: config.TransportStreamableHTTP,
		Timeout: config.Duration(10 * time.Second), ForwardHeaders: []string{"x-tenant"}}
	log := slog.New(slog.DiscardHandler)
	mgr := backends.NewManager([]config.Backend{cfg}, aggregator.New(aggregator.Policy{}, log), log, "test")
	mgr.Start(30 * time.Second)
	t.Cleanup(mgr.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := mgr.WaitReady(ctx); err != nil {
		t.Fatalf("backend not ready: %v", err)
	}
	return mgr
}

func legacy(*backends.Backend) backends.SessionOptions { return backends.SessionOptions{Legacy: true} }

// TestForgottenSessionWasReused pins the Broken hook between the two
// packages: a raw send the backend answers 404 marks the client's session
// broken, so the next Raw opens a new one (with the client's forwarded
// headers) instead of handing out the forgotten session again.
func TestForgottenSessionWasReused(t *testing.T) {
	t.Parallel()
	url, tenants := backend(t)
	set := session.New(manager(t, url), legacy)
	t.Cleanup(func() { _ = set.Close() })
	if got := <-tenants; got != "" { // the control connection's, before ready
		t.Fatalf("the control connection's initialize carried X-Tenant %q", got)
	}
	set.Forward(http.Header{"X-Tenant": {"acme"}, "X-Other": {"no"}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	first, ok, err := set.Raw(ctx, "b")
	if !ok || err != nil {
		t.Fatalf("opening the backend session: ok %v, %v", ok, err)
	}
	if got := <-tenants; got != "acme" {
		t.Fatalf("initialize carried X-Tenant %q, want the client's forwarded acme", got)
	}
	if err := first.Notify(ctx, []byte(forget)); !errors.Is(err, mcpmsg.ErrSessionExpired) {
		t.Fatalf("a 404 gave %v, want ErrSessionExpired", err)
	}
	second, ok, err := set.Raw(ctx, "b")
	if !ok || err != nil {
		t.Fatalf("reopening the backend session: ok %v, %v", ok, err)
	}
	if second.ID() == first.ID() {
		t.Fatalf("the forgotten session %s was handed out again", first.ID())
	}
	if got := <-tenants; got != "acme" {
		t.Fatalf("the new session's initialize carried X-Tenant %q, want acme", got)
	}
	if n := set.Len(); n != 1 {
		t.Fatalf("the set holds %d sessions, want 1", n)
	}
}

// TestClosedSetStillOpened pins Close: a Get after it fails with
// ErrSessionClosed and opens nothing.
func TestClosedSetStillOpened(t *testing.T) {
	t.Parallel()
	url, _ := backend(t)
	set := session.New(manager(t, url), legacy)
	if err := set.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := set.Get(context.Background(), "b"); !errors.Is(err, backends.ErrSessionClosed) {
		t.Fatalf("Get after Close: %v, want ErrSessionClosed", err)
	}
	if n := set.Len(); n != 0 {
		t.Fatalf("a closed set opened %d sessions", n)
	}
}
