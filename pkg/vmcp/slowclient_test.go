package vmcp_test

import (
	"context"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// Injected edge timeouts, distinct so each case shows its own key at work.
const (
	bodyTimeout   = 600 * time.Millisecond
	idleTimeout   = 900 * time.Millisecond
	headerTimeout = 1200 * time.Millisecond
	// cutSlack is how late after its timeout a connection may close (a
	// loaded 2-core machine running -race).
	cutSlack = 10 * time.Second
)

func shortEdgeTimeouts(c *config.Config) {
	c.HTTP.ReadBodyTimeout = config.Duration(bodyTimeout)
	c.HTTP.IdleTimeout = config.Duration(idleTimeout)
	c.HTTP.ReadHeaderTimeout = config.Duration(headerTimeout)
	c.HTTP.MaxBodyBytes = 2048 // below net/http's 256 KiB post-handler drain
	c.HTTP.AllowedOrigins = []string{"http://app.example"}
}

const stalledPost = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n"

// stalled is a request with the given method and extra header lines that
// announces a 100-byte body and sends none of it.
func stalled(method, host, extra string) string {
	return method + " /mcp HTTP/1.1\r\nHost: " + host + "\r\nContent-Type: application/json\r\n" + extra + "Content-Length: 100\r\n\r\n"
}

// Each slow client holds a connection (and a server goroutine) until its
// timeout closes it; then the goroutines return to the baseline. Before
// the edge timeouts, all of these were still open after 150 s.
func TestSlowClientsAreClosedWithinTheirTimeoutAndGoroutinesReturn(t *testing.T) {
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := serveVMCP(t, shortEdgeTimeouts, vmcp.Options{}, b.Config())
	settle(t, v, b)
	cases := []struct {
		name    string
		timeout time.Duration
		status  int              // the answer before the close; 0: none
		open    func(c net.Conn) // what the client sends
		trickle func(c net.Conn) // runs on its own goroutine, if set
	}{
		{"POST announcing Content-Length 100 that sends nothing", bodyTimeout, http.StatusRequestTimeout,
			func(c net.Conn) { _, _ = io.WriteString(c, stalledPost) }, nil},
		{"body trickled a byte at a time", bodyTimeout, http.StatusRequestTimeout,
			func(c net.Conn) { _, _ = io.WriteString(c, stalledPost) }, trickle},
		{"idle keep-alive connection", idleTimeout, http.StatusOK,
			func(c net.Conn) { _, _ = io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n") }, nil},
		{"headers never finished", headerTimeout, 0,
			func(c net.Conn) { _, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n") }, nil},
		// Refused at once, the rest of the body unread: the connection
		// closes now rather than wait on the body (timeout 0).
		{"refused Origin with a stalled body", 0, http.StatusForbidden,
			func(c net.Conn) {
				_, _ = io.WriteString(c, stalled("POST", "127.0.0.1", "Origin: http://evil.example\r\n"))
			}, nil},
		{"refused Host with a stalled body", 0, http.StatusForbidden,
			func(c net.Conn) { _, _ = io.WriteString(c, stalled("POST", "evil.example", "")) }, nil},
		{"preflight with a stalled body", 0, http.StatusNoContent,
			func(c net.Conn) {
				_, _ = io.WriteString(c, stalled("OPTIONS", "127.0.0.1", "Origin: http://app.example\r\nAccess-Control-Request-Method: POST\r\n"))
			}, nil},
		{"body announced over max_body_bytes", 0, http.StatusRequestEntityTooLarge,
			func(c net.Conn) {
				_, _ = io.WriteString(c, strings.Replace(stalledPost, "Content-Length: 100", "Content-Length: 4096", 1))
			}, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			const n = 10
			baseline := runtime.NumGoroutine()
			results := make(chan closed, n)
			for range n {
				start := time.Now() // before the dial: the header timeout starts at accept
				c := rawConn(t, v.Addr)
				tc.open(c)
				if tc.trickle != nil {
					go tc.trickle(c)
				}
				go func() { results <- readUntilClosed(c, start) }()
			}
			for range n {
				r := <-results
				require.NoError(t, r.err, "the server did not close the connection within %s", edgeWait)
				if !(tc.trickle != nil && r.status == 0) { // a reset may drop the 408 the trickler never read
					assert.Equal(t, tc.status, r.status)
				}
				assert.GreaterOrEqual(t, r.elapsed, tc.timeout)
				assert.Less(t, r.elapsed, tc.timeout+cutSlack)
			}
			waitGoroutines(t, baseline)
		})
	}
}

// trickle sends one body byte every 50 ms until the connection fails (the
// 100 bytes would take 5 s).
func trickle(c net.Conn) {
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for range 100 {
		<-tick.C
		if _, err := c.Write([]byte{'x'}); err != nil {
			return
		}
	}
}

// A Legacy GET stream (no body) and a Modern subscriptions/listen (a POST,
// whose body deadline is cleared once it is read) both outlive the body
// and idle timeouts (a server-wide WriteTimeout would cut them), shown by
// a header stall cut after they opened, and still deliver the next
// list_changed.
func TestStreamsOutliveReadBodyAndIdleTimeouts(t *testing.T) {
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := serveVMCP(t, shortEdgeTimeouts, vmcp.Options{}, b.Config())
	sid := legacySession(t, v.URL)
	req, err := http.NewRequest(http.MethodGet, v.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	get := openSSE(t, req)
	listen := openSSE(t, post(t, v.URL, modernListen(7), map[string]string{
		"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}))
	listen.next(t, "notifications/subscriptions/acknowledged")

	start := time.Now() // the streams are open; a header stall outlasts every other timeout
	c := rawConn(t, v.Addr)
	_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
	cut := readUntilClosed(c, start)
	require.NoError(t, cut.err)
	require.GreaterOrEqual(t, cut.elapsed, max(bodyTimeout, idleTimeout))

	b.Server.AddTool(&mcp.Tool{Name: "late", InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	get.next(t, "notifications/tools/list_changed")
	listen.next(t, "notifications/tools/list_changed")
}

// settle makes one Modern tools/call through vmcp, so that its connections
// to the backend (and their goroutines) exist before a baseline is taken.
func settle(t *testing.T, v *served, b *harness.Backend) {
	t.Helper()
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"text":"x"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req := post(t, v.URL, body, map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "alpha_echo"})
	req.Close = true // no idle keep-alive connection left in the client
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	out, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, string(out))
	// vmcp opens its GET stream to the backend behind the go-sdk client's
	// (backends/transport/getstream.go): until it is connected, its connection's
	// goroutines are still to come, and would be counted over a baseline.
	// A notification goes out on that stream alone (nothing is dialled).
	b.AwaitGETStreams(t, edgeWait)
}
