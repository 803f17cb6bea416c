package vmcp_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// freezingProxy is a TCP proxy to target that, once frozen, forwards
// nothing more in either direction and closes nothing: what a client sees
// when its connection is dropped silently (no FIN, no RST) on the way.
// What the server still sends is read and discarded; the first
// connection's is also parsed, so that ended tells when the server ended
// its response (its last chunk, or closing the connection: vmcp cuts a
// stream it cannot end in time). Its goroutines end with the test.
type freezingProxy struct {
	lis        net.Listener
	target     string
	frozen     chan struct{}
	freezeOnce sync.Once
	ended      chan struct{} // closed when the first connection's response has ended
	tee        *io.PipeWriter
	mu         sync.Mutex
	conns      []net.Conn
	wg         sync.WaitGroup
}

func startFreezingProxy(t *testing.T, target string) *freezingProxy {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	pr, pw := io.Pipe()
	p := &freezingProxy{lis: lis, target: target, frozen: make(chan struct{}), ended: make(chan struct{}), tee: pw}
	p.wg.Go(p.accept)
	p.wg.Go(func() { // the first response, as the client would have read it
		defer close(p.ended)
		defer pr.Close()
		if resp, err := http.ReadResponse(bufio.NewReader(pr), nil); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
		}
	})
	t.Cleanup(func() {
		_ = lis.Close()
		_ = pw.Close()
		p.mu.Lock()
		for _, c := range p.conns {
			_ = c.Close()
		}
		p.mu.Unlock()
		p.wg.Wait()
	})
	return p
}

func (p *freezingProxy) accept() {
	tee := io.Writer(p.tee)
	for {
		client, err := p.lis.Accept()
		if err != nil {
			return
		}
		server, err := net.Dial("tcp", p.target)
		if err != nil {
			_ = client.Close()
			continue
		}
		p.mu.Lock()
		p.conns = append(p.conns, client, server)
		p.mu.Unlock()
		p.wg.Go(func() { p.pipe(server, client, nil) })
		first := tee
		p.wg.Go(func() { p.pipe(client, server, first) })
		tee = nil
	}
}

// pipe copies src to dst until frozen; then a downstream pipe (the
// server's side, fromServer non-nil: everything read also goes there)
// keeps reading and discards, and an upstream one stops.
func (p *freezingProxy) pipe(dst, src net.Conn, fromServer io.Writer) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if err != nil {
			if c, ok := fromServer.(io.Closer); ok {
				_ = c.Close() // the server closed the connection: its response ended too
			}
			return
		}
		if fromServer != nil {
			_, _ = fromServer.Write(buf[:n])
		}
		select {
		case <-p.frozen:
			if fromServer == nil {
				return
			}
			continue // dropped
		default:
		}
		if _, err := dst.Write(buf[:n]); err != nil {
			return
		}
	}
}

func (p *freezingProxy) freeze() { p.freezeOnce.Do(func() { close(p.frozen) }) }

// standaloneGET is the request for session sid's standalone GET stream at
// url.
func standaloneGET(t *testing.T, url, sid string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url, nil)
	require.NoError(t, err)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	return req
}

// A client's GET stream whose connection is silently dropped on the way
// (a proxy that stops forwarding without closing) locked its session out:
// the owner's new GET got 409 for as long as the dead stream looked alive.
// Now the new GET replaces it at once, the old stream ends on vmcp's side,
// and the replacement receives the next notification.
func TestSilentlyDroppedGETStreamLockedTheSessionOut(t *testing.T) {
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := serveVMCP(t, nil, vmcp.Options{}, b.Config())
	sid := legacySession(t, v.URL)
	proxy := startFreezingProxy(t, v.Addr)

	first := openSSE(t, standaloneGET(t, "http://"+proxy.lis.Addr().String()+v.Cfg.Path, sid))
	addTool(t, b, "before")
	first.next(t, "notifications/tools/list_changed") // the first stream is live, through the proxy

	proxy.freeze()
	start := time.Now()
	second := openSSE(t, standaloneGET(t, v.URL, sid)) // 200, not 409
	require.Less(t, time.Since(start), 5*time.Second, "replaced at once")
	select {
	case <-proxy.ended:
	case <-time.After(edgeWait):
		t.Fatal("vmcp did not end the replaced stream")
	}
	addTool(t, b, "after")
	second.next(t, "notifications/tools/list_changed")
}

// addTool adds a tool to b's server (tools/list_changed to vmcp), once
// vmcp's GET streams to b are connected (before, the go-sdk drops the
// notification).
func addTool(t *testing.T, b *harness.Backend, name string) {
	t.Helper()
	b.AwaitGETStreams(t, edgeWait)
	b.Server.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
}
