package cluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
)

// testCluster starts a Cluster on Redis at url under prefix.
func testCluster(t testing.TB, url, prefix, id, advertise string) *Cluster {
	t.Helper()
	c, err := New(Options{MaxEventsPerSession: testMaxEvents, Redis: Redis{URL: url}, KeyPrefix: prefix, NodeID: id, AdvertiseURL: advertise, Timing: fast, Logger: discard})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// pair is two nodes on one Redis: a (the front, forwarding) and b (the
// owner, serving owner's handler).
type pair struct {
	a, b       *Cluster
	front, own *httptest.Server
	release    chan struct{} // lets b's /sse handler write its second event
}

func newPair(t testing.TB) *pair {
	url := clustertest.URL(t)
	prefix := clustertest.Prefix(t, url)
	p := &pair{release: make(chan struct{})}
	p.own = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Seen-Host", r.Host)
		w.Header().Set("X-Seen-Forwarded-By", r.Header.Get(ForwardedHeader))
		w.Header()["Vary"] = []string{"Origin", "Accept-Encoding"} // as the owner's CORS middleware and more
		switch r.URL.Path {
		case "/sse":
			w.Header().Set("Content-Type", "text/event-stream")
			fmt.Fprint(w, "data: one\n\n")
			w.(http.Flusher).Flush()
			<-p.release
			fmt.Fprint(w, "data: two\n\n")
		case "/flood": // a stream that writes until its reader is gone
			w.Header().Set("Content-Type", "text/event-stream")
			event := "data: " + strings.Repeat("x", 32<<10) + "\n\n"
			for r.Context().Err() == nil {
				if _, err := io.WriteString(w, event); err != nil {
					return
				}
				w.(http.Flusher).Flush()
			}
		case "/hang": // a frozen owner: never answers
			select {
			case <-r.Context().Done():
			case <-p.release:
			}
		default:
			b, _ := io.ReadAll(r.Body)
			fmt.Fprintf(w, "%s %s %s", r.Method, r.URL.Path, b)
		}
	}))
	t.Cleanup(p.own.Close)
	p.front = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Add("Vary", "Origin") // the front's CORS middleware
		var err error
		if s := r.URL.Query().Get("session"); s != "" {
			err = p.a.ForwardSession(w, r, s, r.URL.Query().Get("principal"))
		} else {
			err = p.a.Forward(w, r, r.URL.Query().Get("to"))
		}
		if err != nil {
			w.Header().Set("X-Forward-Error", kind(err))
			http.Error(w, err.Error(), 599)
		}
	}))
	t.Cleanup(p.front.Close)
	p.a = testCluster(t, url, prefix, "a", p.front.URL)
	p.b = testCluster(t, url, prefix, "b", p.own.URL)
	return p
}

func kind(err error) string {
	for _, k := range []error{ErrLoop, ErrNotNode, ErrUnreachable, ErrNotFound, ErrUnavailable, ErrForbidden} {
		if errors.Is(err, k) {
			return k.Error()
		}
	}
	return "other: " + err.Error()
}

func TestClusterForwardStreamsSSEAndKeepsHostAndBody(t *testing.T) {
	p := newPair(t)
	req, _ := http.NewRequest(http.MethodGet, p.front.URL+"/sse?to="+p.own.URL, nil)
	req.Host = "front.example"
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "front.example", resp.Header.Get("X-Seen-Host"), "the owner sees the client's Host")
	require.Equal(t, "a", resp.Header.Get("X-Seen-Forwarded-By"))
	br := bufio.NewReader(resp.Body)
	line, err := br.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "data: one\n", line, "the first event arrives while the owner is still writing: streamed, not buffered")
	close(p.release)
	rest, _ := io.ReadAll(br)
	require.Equal(t, "\ndata: two\n\n", string(rest))

	resp, err = http.Post(p.front.URL+"/echo?to="+p.own.URL, "text/plain", strings.NewReader("body!"))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, "POST /echo body!", string(b))
}

func TestClusterForwardOnlyToLiveNodesAndNeverTwice(t *testing.T) {
	p := newPair(t)
	get := func(path string, hdr http.Header) *http.Response {
		req, _ := http.NewRequest(http.MethodGet, p.front.URL+path, nil)
		for k, v := range hdr {
			req.Header[k] = v
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	resp := get("/x?to=http://127.0.0.1:9", nil)
	require.Equal(t, ErrNotNode.Error(), resp.Header.Get("X-Forward-Error"), "not a cluster node: refused")
	resp = get("/x?to="+p.front.URL, nil)
	require.Equal(t, ErrLoop.Error(), resp.Header.Get("X-Forward-Error"), "not to itself")
	resp = get("/x?to="+p.own.URL, http.Header{ForwardedHeader: {"z"}})
	require.Equal(t, ErrLoop.Error(), resp.Header.Get("X-Forward-Error"), "a forwarded request is not forwarded again")

	// A node that is announced but refuses connections is unreachable (port
	// 1: the kernel never hands it out, so no other test can take it).
	dead := "http://127.0.0.1:1"
	announce(t, p.a.dir, NodeInfo{ID: "dead", URL: dead}, fast.NodeTTL)
	resp = get("/x?to="+dead, nil)
	require.Equal(t, ErrUnreachable.Error(), resp.Header.Get("X-Forward-Error"))
}

func TestClusterForwardSessionReachesOwnerUntilItLeaves(t *testing.T) {
	p := newPair(t)
	ctx := context.Background()
	require.NoError(t, p.b.SessionStarted(ctx, "S", "", 0))
	resp, err := http.Post(p.front.URL+"/mcp?session=S", "application/json", strings.NewReader("{}"))
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, "POST /mcp {}", string(b))

	resp, err = http.Get(p.front.URL + "/mcp?session=unknown")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, ErrNotFound.Error(), resp.Header.Get("X-Forward-Error"))

	require.NoError(t, p.b.Close()) // graceful leave removes its records
	_, err = p.a.liveOwner(ctx, "S")
	require.ErrorIs(t, err, ErrNotFound)
	_, err = p.a.Node(ctx, "b")
	require.ErrorIs(t, err, ErrNotFound)
}

// Another principal's request for a session is refused before it is
// forwarded: the owner never sees it.
func TestClusterForwardSessionRefusesAnotherPrincipal(t *testing.T) {
	p := newPair(t)
	ctx := context.Background()
	require.NoError(t, p.b.SessionStarted(ctx, "S", "alice", 0))
	post := func(principal string) *http.Response {
		resp, err := http.Post(p.front.URL+"/mcp?session=S&principal="+principal, "application/json", strings.NewReader("{}"))
		require.NoError(t, err)
		resp.Body.Close()
		return resp
	}
	require.Equal(t, ErrForbidden.Error(), post("bob").Header.Get("X-Forward-Error"))
	require.Equal(t, ErrForbidden.Error(), post("").Header.Get("X-Forward-Error"), "anonymous is another principal")
	require.Equal(t, http.StatusOK, post("alice").StatusCode)
	require.Equal(t, ErrForbidden.Error(), post("bob").Header.Get("X-Forward-Error"), "also from the owner cache")
}

// A forwarded response carried Vary: Origin twice: once from the front
// node's CORS middleware, once copied from the owner's response.
func TestClusterForwardedResponseRepeatedVaryOrigin(t *testing.T) {
	p := newPair(t)
	resp, err := http.Get(p.front.URL + "/x?to=" + p.own.URL)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, []string{"Origin", "Accept-Encoding"}, resp.Header.Values("Vary"))
}

// stuckWriter is a client that stopped reading: a write blocks until the
// write deadline set through http.ResponseController passes, or forever.
type stuckWriter struct {
	header   http.Header
	mu       sync.Mutex
	deadline time.Time
	wrote    chan struct{} // closed at the first write
	once     sync.Once
	gone     chan struct{} // closed at the test's end
}

func (s *stuckWriter) Header() http.Header { return s.header }
func (s *stuckWriter) WriteHeader(int)     {}
func (s *stuckWriter) FlushError() error   { return nil }
func (s *stuckWriter) SetWriteDeadline(t time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.deadline = t
	return nil
}

func (s *stuckWriter) Write(p []byte) (int, error) {
	s.once.Do(func() { close(s.wrote) })
	s.mu.Lock()
	d := s.deadline
	s.mu.Unlock()
	if d.IsZero() {
		<-s.gone
		return 0, net.ErrClosed
	}
	select {
	case <-time.After(time.Until(d)):
		return 0, os.ErrDeadlineExceeded
	case <-s.gone:
		return 0, net.ErrClosed
	}
}

// A client that stopped reading a forwarded stream held the forwarding
// node's proxy (and its connection to the owner) for as long as it stayed:
// no write toward it had a deadline. Now each is bounded by WriteTimeout.
func TestClusterForwardedStreamToAClientThatStoppedReadingHeldTheProxy(t *testing.T) {
	p := newPair(t)
	w := &stuckWriter{header: http.Header{}, wrote: make(chan struct{}), gone: make(chan struct{})}
	t.Cleanup(func() { close(w.gone) })
	r := httptest.NewRequest(http.MethodGet, "/flood", nil)
	done := make(chan error, 1)
	go func() { done <- p.a.Forward(w, r, p.own.URL) }()
	select {
	case <-w.wrote:
	case err := <-done:
		t.Fatalf("the forward ended before it wrote: %v", err)
	}
	select {
	case <-done:
	case <-time.After(fast.WriteTimeout + 5*time.Second):
		t.Fatal("the forward still writes to a client that stopped reading")
	}
}
