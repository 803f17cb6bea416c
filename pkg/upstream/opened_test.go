package upstream_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/vmcp/vmcp/pkg/backends"
	bsession "github.com/vmcp/vmcp/pkg/backends/session"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// TestOpenSessionRequestAndNotify sends a request of the session's own
// (logging/setLevel) and a client notification (roots list_changed) on a
// Legacy client's open backend session through Core.Request and
// Core.Notify: the backend gets both on that session, each is counted
// once, and a session the backend no longer knows fails the request
// without another session being opened.
func TestOpenSessionRequestAndNotify(t *testing.T) {
	t.Parallel()
	h, got := recordingBackend()
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	c, m, mgr := core(t, hs.URL, 10*time.Second)
	set := bsession.New(mgr, func(*backends.Backend) backends.SessionOptions { return backends.SessionOptions{Legacy: true} })
	t.Cleanup(func() { _ = set.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, ok, err := set.Raw(ctx, "b"); !ok || err != nil {
		t.Fatalf("opening the backend session: %v", err)
	}
	open := set.Open()
	if len(open) != 1 || !open[0].Legacy() || open[0].Raw == nil {
		t.Fatalf("want one open Legacy HTTP session, got %+v", open)
	}
	o := open[0]
	res, err := c.Request(ctx, o, "logging/setLevel", json.RawMessage(`{"level":"error"}`))
	if err != nil || string(res) != "{}" {
		t.Fatalf("logging/setLevel: %s, %v", res, err)
	}
	if err := c.Notify(ctx, o, "notifications/roots/list_changed", nil); err != nil {
		t.Fatalf("roots list_changed: %v", err)
	}
	for _, method := range []string{"logging/setLevel", "notifications/roots/list_changed"} {
		awaitGot(ctx, t, got, method+" "+o.Raw.ID())
		if n := testutil.ToFloat64(m.BackendRequests.WithLabelValues("b", method, upstream.RevisionLegacy, "ok")); n != 1 {
			t.Fatalf("%s counted %v times, want 1", method, n)
		}
	}

	h.ServeHTTP(httptest.NewRecorder(), deleteSession(hs.URL, o.Raw.ID())) // the backend forgets the session
	if _, err := c.Request(ctx, o, "logging/setLevel", json.RawMessage(`{"level":"info"}`)); err == nil {
		t.Fatal("a forgotten session's request succeeded")
	}
	if n := set.Len(); n != 1 {
		t.Fatalf("the set holds %d sessions: the request was sent again on a new one", n)
	}
}

// recordingBackend is a Legacy go-sdk server that reports each
// logging/setLevel and roots list_changed it gets, as method and session
// id, in order.
func recordingBackend() (http.Handler, <-chan string) {
	got := make(chan string, 8)
	srv := mcp.NewServer(&mcp.Implementation{Name: "b", Version: "test"}, nil)
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if method == "logging/setLevel" || method == "notifications/roots/list_changed" {
				got <- method + " " + req.GetSession().ID()
			}
			return next(ctx, method, req)
		}
	})
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil), got
}

// awaitGot waits until the backend reports want (the control
// connection's own setLevel comes too).
func awaitGot(ctx context.Context, t *testing.T, got <-chan string, want string) {
	t.Helper()
	for g := ""; g != want; {
		select {
		case g = <-got:
		case <-ctx.Done():
			t.Fatalf("the backend never got %q", want)
		}
	}
}

// deleteSession is the DELETE that ends backend session id at url.
func deleteSession(url, id string) *http.Request {
	r := httptest.NewRequest(http.MethodDelete, url, nil)
	r.Header.Set("Mcp-Session-Id", id)
	return r
}
