package integration

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// dropListens wraps a backend handler: every subscriptions/listen POST
// naming doc://a counts in opened and live (live until its handler
// returns); the ones served before drop closes are cut when it closes.
func dropListens(opened, live *atomic.Int32, drop chan struct{}) func(http.Handler) http.Handler {
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Mcp-Method") != "subscriptions/listen" {
				h.ServeHTTP(w, r)
				return
			}
			body, _ := io.ReadAll(r.Body)
			r.Body = io.NopCloser(bytes.NewReader(body))
			if bytes.Contains(body, []byte("doc://a")) {
				opened.Add(1)
				live.Add(1)
				defer live.Add(-1)
			}
			select {
			case <-drop:
			default:
				c, cancel := context.WithCancel(r.Context())
				defer cancel()
				go func() {
					select {
					case <-drop:
						cancel()
					case <-c.Done():
					}
				}()
				r = r.WithContext(c)
			}
			h.ServeHTTP(w, r)
		})
	}
}

// TestLegacySubscriptionOnStatelessBackendWasNeverReopened pins a Legacy
// client's resources/subscribe to a stateless (Modern) backend, which went
// out as the go-sdk client's own listen: fire-and-forget, outside the one
// sender, never reopened when the backend dropped it. Now it is a listen
// the client session owns (upstream.Core.Subscription): a dropped one is
// reopened and the gap covered with a resources/updated, updates reach
// the subscribing session only, and unsubscribe and the session's end
// close it on the backend.
func TestLegacySubscriptionOnStatelessBackendWasNeverReopened(t *testing.T) {
	t.Parallel()
	var opened, live atomic.Int32
	drop := make(chan struct{})
	be := startSubBackend(t, "be", harness.Stateless, nil, addDocs, dropListens(&opened, &live, drop))
	v := harness.StartVMCP(t, nil, be.cfg)
	got := map[string]chan string{"a": make(chan string, 64), "b": make(chan string, 64)}
	conn := func(k string) *mcp.ClientSession {
		return v.Connect(t, legacy, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			got[k] <- r.Params.URI
		}})
	}
	a, b := conn("a"), conn("b")
	require.NoError(t, a.Subscribe(ctx(t), &mcp.SubscribeParams{URI: "doc://a"}))
	require.NoError(t, b.Subscribe(ctx(t), &mcp.SubscribeParams{URI: "doc://b"}))
	require.Equal(t, int32(1), opened.Load())

	close(drop)
	require.Equal(t, "doc://a", recvURI(t, got["a"]), "the gap is covered once the listen is reopened")
	require.Equal(t, int32(2), opened.Load())
	require.NoError(t, be.srv.ResourceUpdated(ctx(t), &mcp.ResourceUpdatedNotificationParams{URI: "doc://a"}))
	require.Equal(t, "doc://a", recvURI(t, got["a"]), "later updates flow again")
	require.NoError(t, be.srv.ResourceUpdated(ctx(t), &mcp.ResourceUpdatedNotificationParams{URI: "doc://b"}))
	require.Equal(t, "doc://b", recvURI(t, got["b"]))
	for len(got["b"]) > 0 { // b's own listen was dropped too: its gap is covered as well
		require.Equal(t, "doc://b", <-got["b"], "b was told of a URI it did not subscribe to")
	}
	for len(got["a"]) > 0 {
		require.Equal(t, "doc://a", <-got["a"], "a was told of a URI it did not subscribe to")
	}

	require.NoError(t, a.Unsubscribe(ctx(t), &mcp.UnsubscribeParams{URI: "doc://a"}))
	require.Eventually(t, func() bool { return live.Load() == 0 }, stateWait, 5*time.Millisecond, "unsubscribe closes the listen")
	require.NoError(t, a.Subscribe(ctx(t), &mcp.SubscribeParams{URI: "doc://a"}))
	require.Equal(t, int32(1), live.Load())
	require.NoError(t, a.Close())
	require.Eventually(t, func() bool { return live.Load() == 0 }, stateWait, 5*time.Millisecond, "the session's end closes its listen")
}
