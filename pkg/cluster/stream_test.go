package cluster

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
)

// sdkLike stands for the SDK's standalone GET: headers, a priming comment,
// then it hangs until the request ends.
var sdkLike = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	fmt.Fprint(w, ": ok\n\n")
	http.NewResponseController(w).Flush()
	<-r.Context().Done()
})

// streamServer serves ServeStream for session "S" (started here): over
// HTTP/1.1 this node's own stream; sdkLike would serve HTTP/2 ones.
func streamServer(t *testing.T, c *Cluster) *httptest.Server {
	startSession(t, c, "S")
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.ServeStream(w, r, "S", sdkLike)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return hs
}

// streamServerFor serves ServeStream for the session named by ?s=.
func streamServerFor(t *testing.T, c *Cluster) *httptest.Server {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.ServeStream(w, r, r.URL.Query().Get("s"), sdkLike)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return hs
}

// startSession does for session id what the SDK handler and the Legacy
// dispatcher do at initialize: the store opens its standalone stream, the
// cluster records the session as this node's.
func startSession(t *testing.T, c *Cluster, id string) {
	t.Helper()
	require.NoError(t, c.SessionStarted(context.Background(), id, "", 0))
	require.NoError(t, c.EventStore().Open(context.Background(), id, ""))
}

// openStream opens a GET; cancel closes its connection.
func openStream(t *testing.T, url string) (*http.Response, context.CancelFunc) {
	return openStreamWith(t, http.DefaultClient, url, "")
}

// openStreamWith opens a GET with client, resuming after lastEventID if
// set; cancel closes its connection.
func openStreamWith(t *testing.T, client *http.Client, url, lastEventID string) (*http.Response, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	req.Header.Set("Accept", "text/event-stream")
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := client.Do(req)
	require.NoError(t, err)
	t.Cleanup(func() { cancel(); resp.Body.Close() })
	return resp, cancel
}

func TestClusterStandaloneGET(t *testing.T) {
	get := func(id string) *http.Request {
		r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
		if id != "" {
			r.Header.Set("Last-Event-ID", id)
		}
		return r
	}
	require.True(t, StandaloneGET(get("")))
	require.True(t, StandaloneGET(get("_12")))
	require.False(t, StandaloneGET(get("abc_3")), "resuming a POST's stream")
	require.False(t, StandaloneGET(httptest.NewRequest(http.MethodPost, "/mcp", nil)))
}

// Before evict-and-replace, a client whose GET connection died without a
// FIN got 409 Conflict on every new GET for as long as the dead stream's
// writes did not fail: the new GET now replaces the live one at once, and
// the old stream ends cleanly.
func TestClusterSecondGETGot409WhileADeadStreamHeldTheLease(t *testing.T) {
	backendsTimed(t, slowWrites, func(t *testing.T, c *Cluster) {
		hs := streamServer(t, c)
		first, _ := openStream(t, hs.URL) // its client never reads again
		require.Equal(t, http.StatusOK, first.StatusCode)
		start := time.Now()
		second, _ := openStream(t, hs.URL)
		require.Equal(t, http.StatusOK, second.StatusCode)
		require.Less(t, time.Since(start), slowWrites.WriteTimeout, "replaced at once, not once the dead stream's write timed out")
		_, err := io.ReadAll(first.Body)
		require.NoError(t, err, "the replaced stream ended cleanly")
	})
}

func TestClusterStreamHolderPingsItsClient(t *testing.T) {
	backendsCluster(t, func(t *testing.T, c *Cluster) {
		hs := streamServer(t, c)
		first, _ := openStream(t, hs.URL)
		br := bufio.NewReader(first.Body)
		line, _ := br.ReadString('\n')
		require.Equal(t, ": ok\n", line)
		_, _ = br.ReadString('\n') // blank line after ": ok"
		line, err := br.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, ": ping\n", line, "the holder checks its client with SSE comments")
	})
}

func TestClusterStreamReconnectAfterDeadConnectionSucceeds(t *testing.T) {
	backendsTimed(t, slowWrites, func(t *testing.T, c *Cluster) {
		hs := streamServer(t, c)
		first, cancel := openStream(t, hs.URL)
		require.Equal(t, http.StatusOK, first.StatusCode)
		cancel() // the client's connection dies
		start := time.Now()
		second, _ := openStream(t, hs.URL)
		require.Equal(t, http.StatusOK, second.StatusCode)
		require.Less(t, time.Since(start), slowWrites.WriteTimeout)
	})
}

// A lease left in Redis by a holder that died without dropping it used to
// block a new stream until it expired. The lease is node-local now: the
// only thing a new GET waits for is this node's previous stream ending,
// and one whose handler does not end (stuck) delays the new stream by at
// most Timing.WriteTimeout, never into a 409.
func TestClusterStreamReplacesAStuckHolderWithinTheWriteTimeout(t *testing.T) {
	backendsCluster(t, func(t *testing.T, c *Cluster) {
		var calls atomic.Int32
		stuck := make(chan struct{})
		startSession(t, c, "S")
		hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			c.ServeStream(w, r, "S", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if calls.Add(1) > 1 {
					sdkLike.ServeHTTP(w, r)
					return
				}
				w.Header().Set("Content-Type", "text/event-stream")
				w.WriteHeader(http.StatusOK)
				http.NewResponseController(w).Flush()
				<-stuck // ignores its context
			}))
		}))
		hs.EnableHTTP2 = true // the SDK handler serves HTTP/2 streams
		hs.StartTLS()
		t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
		t.Cleanup(func() { close(stuck) }) // runs first: hs.Close waits for the handler
		first, _ := openStreamWith(t, hs.Client(), hs.URL, "")
		require.Equal(t, http.StatusOK, first.StatusCode)
		require.Equal(t, 2, first.ProtoMajor)
		start := time.Now()
		second, _ := openStreamWith(t, hs.Client(), hs.URL, "")
		require.Equal(t, http.StatusOK, second.StatusCode)
		require.Less(t, time.Since(start), fast.WriteTimeout+eventWait/2, "bounded by the write timeout")
	})
}

func TestClusterStreamRedisDownIs503NamingRedis(t *testing.T) {
	srv := clustertest.Start(t)
	c := testCluster(t, srv.URL(), "t:", "n", "http://127.0.0.1:1")
	hs := streamServer(t, c)
	srv.Stop()
	// Opening a stream does no Redis I/O: it is refused once the node
	// knows Redis is down (its heartbeat finds out).
	require.Eventually(t, func() bool { return c.Check() != nil }, eventWait, 10*time.Millisecond)
	resp, _ := openStream(t, hs.URL)
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode)
	var b strings.Builder
	_, _ = bufio.NewReader(resp.Body).WriteTo(&b)
	require.Contains(t, b.String(), "(Redis) unavailable")
	require.NotContains(t, b.String(), srv.Addr, "no infrastructure detail for clients")
}

// slowWrites is fast with a write timeout no loaded machine reaches: a
// stream replaced "at once" is one replaced well within it.
var slowWrites = func() Timing { t := fast; t.WriteTimeout = time.Minute; return t }()

// backendsCluster runs f on a memory-mode and a Redis-mode Cluster.
func backendsCluster(t *testing.T, f func(t *testing.T, c *Cluster)) { backendsTimed(t, fast, f) }

// backendsTimed runs f on a memory-mode and a Redis-mode Cluster with
// timing.
func backendsTimed(t *testing.T, timing Timing, f func(t *testing.T, c *Cluster)) {
	t.Run("memory", func(t *testing.T) {
		c, err := New(Options{MaxEventsPerSession: testMaxEvents, Timing: timing, Logger: discard})
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		f(t, c)
	})
	t.Run("redis", func(t *testing.T) {
		url := clustertest.URL(t)
		c, err := New(Options{MaxEventsPerSession: testMaxEvents, Redis: Redis{URL: url}, KeyPrefix: clustertest.Prefix(t, url), NodeID: "n", AdvertiseURL: "http://127.0.0.1:1", Timing: timing, Logger: discard})
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.Close() })
		f(t, c)
	})
}
