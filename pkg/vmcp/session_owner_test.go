package vmcp_test

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// stream opens a Legacy session's standalone GET stream with token and
// returns its status, a channel of its SSE data lines (closed when the
// stream ends) and drop, which cuts the connection (also run when the
// test ends).
func stream(t *testing.T, url, token, session string) (int, <-chan string, func()) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Accept", "text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	lines := make(chan string, 100)
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(lines)
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				select {
				case lines <- d:
				default: // the test reads what it needs; never block the reader
				}
			}
		}
	}()
	var once sync.Once
	drop := func() { once.Do(func() { cancel(); resp.Body.Close(); <-done }) }
	t.Cleanup(drop)
	return resp.StatusCode, lines, drop
}

// awaitLine waits for a data line containing want.
func awaitLine(t *testing.T, lines <-chan string, want string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			require.True(t, ok, "stream ended before %q", want)
			if strings.Contains(l, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no %q on the stream within 10s", want)
		}
	}
}

// Principal B presenting principal A's session id gets 403 on POST, GET
// (while A's stream is live, and when A has none) and DELETE, and nothing
// happens: no call reaches the backend, no stream is taken, the session
// stays; A keeps calling and receiving notifications on its GET stream.
func TestAnotherPrincipalCannotUseASessionItDidNotCreate(t *testing.T) {
	idp := authtest.Start(t, audience)
	v, b := protected(t, idp, nil)
	alice, bob := idp.Token(t, "alice", "mcp:tools"), idp.Token(t, "bob", "mcp:tools")

	changed := make(chan struct{}, 10)
	a1, _, err := connect(t, v.URL, alice, "2025-11-25", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	require.NoError(t, err)
	s1 := a1.ID()
	require.NotEmpty(t, s1)

	refused := func() float64 {
		return testutil.ToFloat64(v.Server.Metrics().SessionForbidden.WithLabelValues("POST")) +
			testutil.ToFloat64(v.Server.Metrics().SessionForbidden.WithLabelValues("GET")) +
			testutil.ToFloat64(v.Server.Metrics().SessionForbidden.WithLabelValues("DELETE"))
	}
	before := refused()
	resp, body := raw(t, http.MethodPost, v.URL, bob, s1, countCall)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, body)
	require.Contains(t, body, "belongs to another principal")
	start := time.Now()
	resp, _ = raw(t, http.MethodGet, v.URL, bob, s1, "")
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "GET while the owner's stream is live")
	require.Less(t, time.Since(start), 2*time.Second, "refused at once, not after waiting for the stream lease")
	resp, _ = raw(t, http.MethodDelete, v.URL, bob, s1, "")
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "DELETE")
	// Regression: an answer with neither result nor error was refused (and
	// ended the session's pending request with that id) before the owner
	// check.
	resp, _ = raw(t, http.MethodPost, v.URL, bob, s1, `{"jsonrpc":"2.0","id":1}`)
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "an empty answer on another's session")

	got, err := call(t, a1, "alpha_count")
	require.NoError(t, err, "the owner's session survived")
	require.Equal(t, "1", got, "no call of B reached the owner's backend session")

	// A session whose owner's GET stream dropped (or was never opened): B
	// cannot take it over, and the owner still can.
	a2, _, err := connectWith(t, &mcp.StreamableClientTransport{Endpoint: v.URL, DisableStandaloneSSE: true}, alice, "2025-11-25", nil)
	require.NoError(t, err)
	resp, _ = raw(t, http.MethodGet, v.URL, bob, a2.ID(), "")
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "GET when the session never had a stream")
	status, _, drop := stream(t, v.URL, alice, a2.ID())
	require.Equal(t, http.StatusOK, status, "the owner opens its stream")
	drop()
	resp, _ = raw(t, http.MethodGet, v.URL, bob, a2.ID(), "")
	require.Equal(t, http.StatusForbidden, resp.StatusCode, "GET after the owner's stream dropped")
	status, lines, _ := stream(t, v.URL, alice, a2.ID())
	require.Equal(t, http.StatusOK, status, "the owner reopens its stream")

	b.AwaitGETStreams(t, edgeWait)    // else the go-sdk drops the list_changed
	harness.AddEcho(b.Server, "late") // tools/list_changed to every session
	awaitLine(t, lines, "notifications/tools/list_changed")
	select {
	case <-changed:
	case <-time.After(edgeWait):
		t.Fatal("the first session's own GET stream got no tools/list_changed")
	}

	require.Equal(t, before+6, refused(), "each refusal is counted")

	resp, _ = raw(t, http.MethodPost, v.URL, bob, "no-such-session", countCall)
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "an unknown session stays 404")
	resp, _ = raw(t, http.MethodDelete, v.URL, alice, a2.ID(), "")
	require.Less(t, resp.StatusCode, 300, "the owner may delete its session")
}

func TestSessionsPerPrincipalAreLimited(t *testing.T) {
	idp := authtest.Start(t, audience)
	v, _ := protected(t, idp, func(c *config.Config) { c.Sessions.Max, c.Sessions.MaxPerPrincipal = 100, 2 })
	alice := idp.Token(t, "alice", "mcp:tools")
	for range 2 {
		_, _, err := connect(t, v.URL, alice, "2025-11-25", nil)
		require.NoError(t, err)
	}
	_, _, err := connect(t, v.URL, alice, "2025-11-25", nil)
	require.ErrorContains(t, err, "sessions.max_per_principal is 2")
	_, _, err = connect(t, v.URL, idp.Token(t, "bob", "mcp:tools"), "2025-11-25", nil)
	require.NoError(t, err, "another principal is not locked out")
	cs, _, err := connect(t, v.URL, alice, "", nil)
	require.NoError(t, err, "Modern requests hold no session")
	_, err = call(t, cs, "alpha_echo")
	require.NoError(t, err)
}
