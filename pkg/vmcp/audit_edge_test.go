package vmcp_test

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
)

// edgeCall is a Modern tools/call body and its headers, with a cookie, a
// traceparent and the given extra headers.
func edgeCall(t *testing.T, url, host, body string, hdr map[string]string) int {
	t.Helper()
	h := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "alpha_echo",
		"Cookie": auditCookie, "Traceparent": auditTraceparent}
	for k, v := range hdr {
		h[k] = v
	}
	req := post(t, url, body, h)
	if host != "" {
		req.Host = host
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, _ = io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode
}

// refusalOf matches the record of a request refused with status by guard.
func refusalOf(status float64, by string) func(map[string]any) bool {
	return func(m map[string]any) bool {
		d, _ := m["decision"].(map[string]any)
		return m["status"] == status && d["by"] == by
	}
}

// Requests the edge refuses before vmcp serves them (a Host not allowed:
// 403, an Origin not listed: 403, a body too large: 413) and those
// authentication refuses (no token: 401, a token without the required
// scope: 403) each have an audit record: denied by that guard, the HTTP
// status as outcome, anonymous, with the client's traceparent; no token
// or cookie reaches the file.
func TestAuditMissedEdgeRefusals(t *testing.T) {
	t.Parallel()
	start := time.Now()
	idp := authtest.Start(t, audience)
	sink, path := newAuditSink(), filepath.Join(t.TempDir(), "audit.log")
	v := serveVMCP(t, func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: audience, RequiredScopes: []string{"mcp:tools"},
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
		c.Cluster.NodeID = auditNode
		c.HTTP.AllowedOrigins = []string{"https://ok.example"}
		c.HTTP.MaxBodyBytes = 1024
		c.Audit = &config.Audit{Path: path}
	}, vmcp.Options{AuditOpen: sink.open})
	token := idp.Token(t, "alice", "other")
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha_echo","arguments":{}}}`
	bearer := map[string]string{"Authorization": "Bearer " + token}

	require.Equal(t, http.StatusForbidden, edgeCall(t, v.URL, "evil.example", body, bearer))
	require.Equal(t, http.StatusForbidden, edgeCall(t, v.URL, "", body, map[string]string{"Origin": "https://evil.example", "Authorization": "Bearer " + token}))
	require.Equal(t, http.StatusRequestEntityTooLarge, edgeCall(t, v.URL, "", strings.Repeat(" ", 2048)+body, bearer))
	require.Equal(t, http.StatusUnauthorized, edgeCall(t, v.URL, "", body, nil))
	require.Equal(t, http.StatusForbidden, edgeCall(t, v.URL, "", body, bearer), "insufficient scope")

	for _, c := range []struct {
		status float64
		by     string
	}{{403, "host"}, {403, "origin"}, {413, "body_size"}, {401, "authentication"}, {403, "authentication"}} {
		rec := sink.await(t, "of the "+c.by+" refusal", 1, refusalOf(c.status, c.by))[0]
		assert.Equal(t, map[string]any{"allowed": false, "by": c.by}, rec["decision"], c.by)
		assert.Equal(t, c.status, rec["outcome"], "%s: the HTTP status", c.by)
		assert.Equal(t, "anonymous", rec["principal"], c.by)
		assert.Equal(t, "modern", rec["revision"], c.by)
		assert.Equal(t, "POST", rec["http"], c.by)
		assert.Equal(t, auditNode, rec["node"], c.by)
		assert.Equal(t, auditTraceparent, rec["traceparent"], c.by)
		ts, _ := rec["time"].(string)
		assert.GreaterOrEqual(t, ts, start.UTC().Add(-time.Second).Format(time.RFC3339), c.by)
	}
	require.NoError(t, v.Srv.Close())
	file, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, secret := range []string{token, "cookie-value-4b1d", "Bearer", "evil.example"} {
		assert.NotContains(t, string(file), secret)
	}
}

// A request whose body does not arrive within http.read_body_timeout is
// refused with 408 and recorded as denied by read_timeout. (The body never
// comes: the refusal does not depend on how long the timeout is.)
func TestAuditMissedReadTimeoutRefusal(t *testing.T) {
	t.Parallel()
	sink := newAuditSink()
	v := serveVMCP(t, func(c *config.Config) {
		c.HTTP.ReadBodyTimeout = config.Duration(100 * time.Millisecond)
		c.Audit = &config.Audit{Path: filepath.Join(t.TempDir(), "audit.log")}
	}, vmcp.Options{AuditOpen: sink.open})
	c := rawConn(t, v.Addr)
	_, err := io.WriteString(c, "POST "+v.Cfg.Path+" HTTP/1.1\r\nHost: "+v.Addr+"\r\nContent-Type: application/json\r\n"+
		"Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n{")
	require.NoError(t, err)
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusRequestTimeout, resp.StatusCode)
	rec := sink.await(t, "of the 408", 1, refusalOf(408, "read_timeout"))[0]
	assert.Equal(t, 408.0, rec["outcome"])
	assert.Equal(t, "legacy", rec["revision"], "no Modern header")
}

// A call an authorization rule denies and one a rate limit refuses name,
// in their audit records, the backend they were bound for (which was not
// asked: the decision says so), on both revisions.
func TestAuditDeniedCallNamedNoBackend(t *testing.T) {
	t.Parallel()
	idp := authtest.Start(t, audience)
	sink := newAuditSink()
	v := auditedVMCP(t, idp, sink, filepath.Join(t.TempDir(), "audit.log"))
	token := idp.Token(t, "alice", "mcp:tools")
	for _, rev := range []struct{ name, protocol string }{{"legacy", "2025-11-25"}, {"modern", ""}} {
		cs := auditClient(t, v, token, "denied", "1", rev.protocol)
		_, err := callTool(t, cs, "alpha_count", map[string]any{})
		require.Error(t, err, "denied by rule 1")
		denied := sink.await(t, "of the denied "+rev.name+" call", 1, auditOf("tools/call", "tool", "alpha_count", rev.name))[0]
		assert.Equal(t, map[string]any{"allowed": false, "by": "authorization", "rule": 1.0}, denied["decision"])
		assert.Equal(t, "alpha", denied["backend"], rev.name)
	}
	cs := auditClient(t, v, token, "limited", "1", "")
	for range 3 {
		_, _ = callTool(t, cs, "alpha_echo", map[string]any{"text": "x"})
	}
	limited := sink.await(t, "of the rate-limited call", 3, auditOf("tools/call", "tool", "alpha_echo", "modern"))[2]
	assert.Equal(t, map[string]any{"allowed": false, "by": "rate_limit", "rule": 0.0}, limited["decision"])
	assert.Equal(t, "alpha", limited["backend"])
}
