package vmcp_test

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

const publicHost = "vmcp.example.com"

// hostTransport sends every request with Host set to host (a reverse
// proxy on the same machine forwarding its public Host over loopback).
type hostTransport struct{ host string }

func (h hostTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Host = h.host
	return http.DefaultTransport.RoundTrip(r)
}

func getStatus(t *testing.T, url, host string) int {
	t.Helper()
	resp, err := (&http.Client{Transport: hostTransport{host}}).Get(url)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

func connectVia(t *testing.T, v *served, host, version string) (*mcp.ClientSession, error) {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "edge", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	ctx, cancel := context.WithTimeout(context.Background(), edgeWait)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: v.URL, HTTPClient: &http.Client{Transport: hostTransport{host}}, MaxRetries: -1}
	cs, err := c.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

// Behind a reverse proxy on the same host, requests arrive over loopback
// with the public Host: refused (403) on every endpoint unless the Host is
// in http.allowed_hosts; listed, it is served by both revisions, the relay
// included.
func TestNonLoopbackHostOnLoopbackListenerIs403UnlessAllowed(t *testing.T) {
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	strict := serveVMCP(t, nil, vmcp.Options{}, b.Config())
	allowing := serveVMCP(t, func(c *config.Config) { c.HTTP.AllowedHosts = []string{publicHost} }, vmcp.Options{}, b.Config())
	for _, path := range []string{"/healthz", "/readyz", "/metrics"} {
		assert.Equal(t, http.StatusForbidden, getStatus(t, "http://"+strict.Addr+path, publicHost), path)
		assert.Equal(t, http.StatusForbidden, getStatus(t, "http://"+allowing.Addr+path, "other.example.com"), path)
		assert.Equal(t, http.StatusOK, getStatus(t, "http://"+allowing.Addr+path, publicHost), path)
		assert.Equal(t, http.StatusOK, getStatus(t, "http://"+strict.Addr+path, "localhost"), path)
	}
	for _, version := range []string{"2025-11-25", ""} { // Legacy (relayed call), Modern
		_, err := connectVia(t, strict, publicHost, version)
		require.Error(t, err, "version %q", version)
		assert.Contains(t, err.Error(), "Forbidden")

		cs, err := connectVia(t, allowing, publicHost, version)
		require.NoError(t, err, "version %q", version)
		relayed := testutil.ToFloat64(allowing.Srv.Metrics().Relayed.WithLabelValues("tools/call"))
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha_echo", Arguments: map[string]any{"text": "hi"}})
		require.NoError(t, err, "version %q", version)
		assert.Equal(t, "echo:hi", harness.Text(t, res), "version %q", version)
		if version != "" {
			assert.Equal(t, relayed+1, testutil.ToFloat64(allowing.Srv.Metrics().Relayed.WithLabelValues("tools/call")), "the Legacy call went through the relay")
		}
	}
}

// http.metrics_listen serves /metrics on its own listener (behind the same
// Host guard); the main listener no longer does.
func TestMetricsListenMovesMetricsOffTheMainListener(t *testing.T) {
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	ml, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	v := serveVMCP(t, func(c *config.Config) { c.HTTP.MetricsListen = ml.Addr().String() }, vmcp.Options{MetricsListener: ml}, b.Config())
	assert.Equal(t, http.StatusNotFound, getStatus(t, "http://"+v.Addr+"/metrics", "127.0.0.1"))
	assert.Equal(t, http.StatusOK, getStatus(t, "http://"+v.Addr+"/healthz", "127.0.0.1"))

	resp, err := http.Get("http://" + ml.Addr().String() + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	assert.Contains(t, resp.Header.Get("Content-Type"), "text/plain")
	assert.Contains(t, string(body), "go_goroutines")
	assert.Equal(t, http.StatusForbidden, getStatus(t, "http://"+ml.Addr().String()+"/metrics", publicHost))
	assert.Equal(t, http.StatusNotFound, getStatus(t, "http://"+ml.Addr().String()+"/healthz", "127.0.0.1"))
	assert.Equal(t, http.StatusNotFound, getStatus(t, "http://"+ml.Addr().String()+"/mcp", "127.0.0.1"))
}

// A browser preflight from an allowed Origin gets 204 with the MCP policy;
// initialize from it carries Access-Control-Allow-Origin and exposes
// Mcp-Session-Id; a disallowed Origin gets 403 and no session is created.
func TestCORSFromAllowedOriginAndRefusalOfOthers(t *testing.T) {
	const origin = "http://app.example:3000"
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := serveVMCP(t, func(c *config.Config) { c.HTTP.AllowedOrigins = []string{origin} }, vmcp.Options{}, b.Config())

	req, err := http.NewRequest(http.MethodOptions, v.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "content-type,mcp-param-region,mcp-protocol-version,mcp-session-id")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Equal(t, origin, resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Equal(t, "POST", resp.Header.Get("Access-Control-Allow-Methods"))
	assert.Equal(t, "content-type,mcp-param-region,mcp-protocol-version,mcp-session-id", resp.Header.Get("Access-Control-Allow-Headers"))

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`
	resp, err = http.DefaultClient.Do(post(t, v.URL, init, map[string]string{"Origin": origin}))
	require.NoError(t, err)
	// The head comes with the SSE priming event, before the go-sdk handler
	// has run initialize (which registers the session): read its response.
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, string(body), `"result"`, "initialize's response")
	assert.NotEmpty(t, resp.Header.Get("Mcp-Session-Id"))
	assert.Equal(t, origin, resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, strings.ToLower(resp.Header.Get("Access-Control-Expose-Headers")), "mcp-session-id")
	assert.Contains(t, strings.ToLower(resp.Header.Get("Access-Control-Expose-Headers")), "www-authenticate")
	// The edge's own refusals carry CORS too, so the page can read them.
	c := rawConn(t, v.Addr)
	_, _ = io.WriteString(c, "POST /mcp HTTP/1.1\r\nHost: "+v.Addr+"\r\nOrigin: "+origin+"\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\n\r\n")
	tooLarge, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	tooLarge.Body.Close()
	assert.Equal(t, http.StatusRequestEntityTooLarge, tooLarge.StatusCode)
	assert.Equal(t, origin, tooLarge.Header.Get("Access-Control-Allow-Origin"))

	sessions := v.Srv.SessionCount()

	for _, method := range []string{http.MethodOptions, http.MethodPost} {
		req := post(t, v.URL, init, map[string]string{"Origin": "http://evil.example:3000", "Access-Control-Request-Method": "POST"})
		req.Method = method
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		resp.Body.Close()
		assert.Equal(t, http.StatusForbidden, resp.StatusCode, method)
		assert.Empty(t, resp.Header.Get("Access-Control-Allow-Origin"))
	}
	assert.Equal(t, sessions, v.Srv.SessionCount(), "a refused Origin creates no session")
}

// With auth configured a browser's preflight needs no token (204), a
// request without one gets 401 whose challenge the page can read
// (Access-Control-Expose-Headers: WWW-Authenticate), and the protected
// resource metadata it points to is readable cross-origin.
func TestCORSWithAuthPreflightNeedsNoTokenAnd401IsReadable(t *testing.T) {
	const origin = "http://app.example:3000"
	idp := authtest.Start(t, audience)
	v, _ := protected(t, idp, func(c *config.Config) { c.HTTP.AllowedOrigins = []string{origin} })

	req, err := http.NewRequest(http.MethodOptions, v.URL, nil)
	require.NoError(t, err)
	req.Header.Set("Origin", origin)
	req.Header.Set("Access-Control-Request-Method", "POST")
	req.Header.Set("Access-Control-Request-Headers", "authorization,content-type")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusNoContent, resp.StatusCode)
	assert.Equal(t, origin, resp.Header.Get("Access-Control-Allow-Origin"))

	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"page","version":"1"}}}`
	resp, err = http.DefaultClient.Do(post(t, v.URL, init, map[string]string{"Origin": origin}))
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	assert.Equal(t, origin, resp.Header.Get("Access-Control-Allow-Origin"))
	assert.Contains(t, strings.ToLower(resp.Header.Get("Access-Control-Expose-Headers")), "www-authenticate")
	challenge := resp.Header.Get("WWW-Authenticate")
	require.Contains(t, challenge, "resource_metadata=")

	meta := strings.Trim(strings.SplitN(strings.SplitN(challenge, `resource_metadata="`, 2)[1], `"`, 2)[0], " ")
	u, err := url.Parse(meta)
	require.NoError(t, err)
	mreq, err := http.NewRequest(http.MethodGet, v.Base+u.Path, nil)
	require.NoError(t, err)
	mreq.Header.Set("Origin", origin)
	resp, err = http.DefaultClient.Do(mreq)
	require.NoError(t, err)
	resp.Body.Close()
	assert.Equal(t, http.StatusOK, resp.StatusCode, u.Path)
	assert.NotEmpty(t, resp.Header.Get("Access-Control-Allow-Origin"), "public metadata: the go-sdk handler answers CORS for any Origin")
}
