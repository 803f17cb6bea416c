package legacy_test

import (
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/dispatch/legacy"
)

// heldStore is an event store whose SessionClosed waits for release: the
// go-sdk still holds the closing session while it waits.
type heldStore struct {
	mcp.EventStore
	closing chan string
	release chan struct{}
}

func (h heldStore) SessionClosed(ctx context.Context, id string) error {
	h.closing <- id
	<-h.release
	return h.EventStore.SessionClosed(ctx, id)
}

// A call on a session that had ended here while the go-sdk was still
// closing it reached the SDK handler, which answered 200 with no message
// (TestRelayIdleEndedSessionAnswers404 failed under load), or hung while
// the close waited: now 404.
func TestCallOnSessionStillClosingGot200WithNoMessage(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	agg := aggregator.New(aggregator.Policy{}, log)
	mgr := backends.NewManager(nil, agg, log, "test")
	store := heldStore{mcp.NewMemoryEventStore(nil), make(chan string, 1), make(chan struct{})}
	opts := completeOptions(agg, mgr, log)
	opts.EventStore = store
	d := legacy.New(agg, mgr, opts)
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	release := sync.OnceFunc(func() { close(store.release) })
	defer release() // before srv.Close: a failed check must not leave a close held
	init := post(t, srv.URL, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`)
	id := init.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	_, _ = io.ReadAll(init.Body) // the response, as a client reads it before initialized
	require.Equal(t, http.StatusAccepted, post(t, srv.URL, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).StatusCode)
	deleted := make(chan error, 1)
	go func() { // the SDK closes the session, the store holds it
		req, _ := http.NewRequest(http.MethodDelete, srv.URL, nil)
		req.Header.Set("Mcp-Session-Id", id)
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			resp.Body.Close()
		}
		deleted <- err
	}()
	select {
	case <-store.closing:
	case <-time.After(10 * time.Second):
		t.Fatal("the session's close never reached the event store")
	}
	resp := post(t, srv.URL, id, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	release()
	assert.Equal(t, http.StatusNotFound, resp.StatusCode, "a call on a closing session: %q", body)
	select {
	case <-deleted:
	case <-time.After(10 * time.Second):
		t.Fatal("the DELETE never ended")
	}
	d.Close()
}

// post sends a Legacy POST of body on session id ("": none) and returns
// the answer, its body unread but bounded by a 5 s timeout.
func post(t *testing.T, url, id, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	if id != "" {
		req.Header.Set("Mcp-Session-Id", id)
	}
	resp, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
	require.NoError(t, err, "POST %s", body)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}
