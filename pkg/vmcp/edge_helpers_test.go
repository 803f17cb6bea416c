package vmcp_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
)

// edgeWait bounds every wait in the edge tests (nothing sleeps for it).
const edgeWait = 20 * time.Second

// served is a vmcp running Serve on a real loopback listener: the
// production path, with its http.Server settings.
type served struct {
	Addr string // host:port of the main listener
	URL  string // the MCP endpoint
	Srv  *vmcp.Server
	Cfg  *config.Config
}

// serveVMCP builds vmcp over backends (defaults applied, then mutate) and
// runs Serve until the test ends.
func serveVMCP(t *testing.T, mutate func(*config.Config), opts vmcp.Options, backends ...config.Backend) *served {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	cfg := &config.Config{Listen: lis.Addr().String(), Backends: backends}
	cfg.ApplyDefaults()
	if mutate != nil {
		mutate(cfg)
	}
	srv, err := vmcp.New(cfg, opts)
	require.NoError(t, err)
	awaitBackends(t, srv)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx, lis, time.Second); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return &served{Addr: lis.Addr().String(), URL: "http://" + lis.Addr().String() + cfg.Path, Srv: srv, Cfg: cfg}
}

// awaitBackends waits until every backend of srv has made its first connection
// attempt: vmcp.New serves at once, before its backends are connected.
func awaitBackends(t testing.TB, srv *vmcp.Server) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, srv.WaitSettled(ctx), "backends still connecting")
}

// rawConn dials addr with every read and write bounded by edgeWait.
func rawConn(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	require.NoError(t, c.SetDeadline(time.Now().Add(edgeWait)))
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// closed is what readUntilClosed saw: the first response's status (0 if
// none) and the time from start to the close.
type closed struct {
	status  int
	elapsed time.Duration
	err     error // a read error other than EOF (the edgeWait bound)
}

// readUntilClosed reads c until the server closes it.
func readUntilClosed(c net.Conn, start time.Time) closed {
	br := bufio.NewReader(c)
	var out closed
	if resp, err := http.ReadResponse(br, nil); err == nil {
		out.status = resp.StatusCode
		_, _ = io.Copy(io.Discard, resp.Body)
	}
	_, err := io.Copy(io.Discard, br)
	out.elapsed = time.Since(start)
	if err != nil && !errors.Is(err, syscall.ECONNRESET) { // EOF (nil here) or a reset: closed
		out.err = err
	}
	return out
}

// waitGoroutines waits until at most want goroutines run, bounded by
// edgeWait. Polling is used only because no event reports a goroutine
// count.
func waitGoroutines(t *testing.T, want int) {
	t.Helper()
	deadline := time.Now().Add(edgeWait)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for runtime.NumGoroutine() > want {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			t.Fatalf("%d goroutines, want at most %d:\n%s", runtime.NumGoroutine(), want, buf[:runtime.Stack(buf, true)])
		}
		<-tick.C
	}
}

// sse is an open SSE response; its data lines arrive on msgs (closed when
// the stream ends).
type sse struct {
	resp *http.Response
	msgs chan map[string]any
}

// openSSE sends req and returns its stream once the response headers are
// in; status must be 200 with text/event-stream.
func openSSE(t *testing.T, req *http.Request) *sse {
	t.Helper()
	ctx, cancel := context.WithCancel(req.Context())
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	s := &sse{resp: resp, msgs: make(chan map[string]any, 64)}
	go func() {
		defer close(s.msgs)
		defer resp.Body.Close()
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			if data, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				var m map[string]any
				if json.Unmarshal([]byte(data), &m) == nil {
					s.msgs <- m
				}
			}
		}
	}()
	t.Cleanup(func() {
		cancel()
		for range s.msgs {
		}
	})
	return s
}

// next returns the stream's next message with the given method, skipping
// others; it fails if the stream ends or nothing comes within edgeWait.
func (s *sse) next(t *testing.T, method string) map[string]any {
	t.Helper()
	timeout := time.After(edgeWait)
	for {
		select {
		case m, ok := <-s.msgs:
			require.True(t, ok, "the stream ended before %s", method)
			if m["method"] == method {
				return m
			}
		case <-timeout:
			t.Fatalf("no %s on the stream", method)
		}
	}
}

// post builds a JSON-RPC POST to url with the given headers.
func post(t *testing.T, url, body string, hdr map[string]string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	return req
}

// legacySession initializes a 2025-11-25 session with raw HTTP and returns
// its id.
func legacySession(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.DefaultClient.Do(post(t, url, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"edge","version":"1"}}}`, nil))
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	hdr := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	resp, err = http.DefaultClient.Do(post(t, url, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode)
	return sid
}

// modernListen is the body of a Modern subscriptions/listen for tool list
// changes.
func modernListen(id int) string {
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`, id)
}
