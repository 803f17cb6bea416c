package vmcp_test

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/ratelimit"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

const (
	auditNode        = "audit-node"
	auditCookie      = "vmcp_sid=cookie-value-4b1d"
	auditTraceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
)

// secretArguments are a call's arguments with redacted keys at three
// depths, in three cases; none of their values may reach the log.
var secretArguments = map[string]any{"text": "hi", "password": "hunter2-pw",
	"nested": map[string]any{"Token": "tok-arg-77", "list": []any{map[string]any{"SECRET": "s3cr3t-v", "keep": 1}}}}

// addAsk (a Modern backend) asks one question, then answers "asked <v>":
// a call of two MRTR rounds.
func addAsk(s *mcp.Server) {
	s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if req.Params.RequestState == "" {
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "v?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"v": map[string]any{"type": "string"}}}}},
				RequestState: "asked"}, nil
		}
		er, _ := req.Params.InputResponses["q"].(*mcp.ElicitResult)
		v := ""
		if er != nil {
			v, _ = er.Content["v"].(string)
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "asked " + v}}}, nil
	})
}

// auditedVMCP starts alpha (echo, count) and mb (ask) behind a vmcp
// requiring alice's tokens, whose rule 0 allows every backend and rule 1
// denies alpha_count, with the audit log (arguments on) seen by sink and
// a rate limit of 2 alpha_echo calls per hour.
func auditedVMCP(t *testing.T, idp *authtest.IdP, sink *auditSink, path string) *harness.VMCP {
	alpha := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) {
		harness.AddEcho(s, "echo")
		harness.AddCounter(s, "count")
	})
	mb := harness.StartBackend(t, "mb", harness.Stateless, addAsk)
	return harness.StartVMCPWithOptions(t, vmcp.Options{AuditOpen: sink.open}, func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: audience, RequiredScopes: []string{"mcp:tools"},
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Nanosecond)}
		c.Authorization = &config.Authorization{Rules: []config.AuthzRule{
			{Allow: &config.AuthzItems{Backends: []string{"*"}}},
			{Deny: &config.AuthzItems{Tools: []string{"alpha_count"}}},
		}}
		c.Cluster.NodeID = auditNode
		c.Audit = &config.Audit{Path: path, Arguments: true, Redact: config.DefaultRedact()}
		c.RateLimits = []config.RateLimit{{Tools: []string{"alpha_echo"}, Per: config.PerPrincipal, Requests: 2,
			Period: config.Duration(time.Hour), Burst: 2, OnStoreError: config.StoreDeny}}
	}, alpha.Config(), mb.Config())
}

// auditClient connects a go-sdk client named name/version at version
// ("" Modern) with token, a cookie and a traceparent on every request;
// it answers elicitations with v=42.
func auditClient(t *testing.T, v *harness.VMCP, token, name, version, protocol string) *mcp.ClientSession {
	t.Helper()
	hc := &http.Client{Transport: &authtest.Bearer{Token: token,
		Base: &headers{cookie: auditCookie, traceparent: auditTraceparent, base: http.DefaultTransport}}}
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: version}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"v": "42"}}, nil
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), auditWait)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: v.URL, HTTPClient: hc, MaxRetries: -1},
		&mcp.ClientSessionOptions{ProtocolVersion: protocol})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func callTool(t *testing.T, cs *mcp.ClientSession, name string, args any) (*mcp.CallToolResult, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), auditWait)
	defer cancel()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// The audit log has one record per client request, with every field, for
// a Legacy call, a Modern call, both rounds of an MRTR call, a call an
// authorization rule denied (by that rule), a listen stream and a refusal
// before authentication; arguments are redacted at any depth, and neither
// the bearer token nor the cookie nor a redacted value is anywhere in the
// file. A third alpha_echo call (Legacy, then Modern) is rate-limited.
func TestAuditLogRecordsEveryFieldOfEveryRequestWithoutSecrets(t *testing.T) {
	start := time.Now()
	idp := authtest.Start(t, audience)
	sink, path := newAuditSink(), filepath.Join(t.TempDir(), "audit.log")
	v := auditedVMCP(t, idp, sink, path)
	token := idp.Token(t, "alice", "mcp:tools")
	alice := map[string]any{"iss": idp.Issuer(), "sub": "alice"}

	lc := auditClient(t, v, token, "audit-legacy", "1.2", "2025-11-25")
	_, err := callTool(t, lc, "alpha_echo", secretArguments)
	require.NoError(t, err)
	_, err = callTool(t, lc, "alpha_count", map[string]any{})
	require.Error(t, err, "denied: an unknown tool to the client")
	mc := auditClient(t, v, token, "audit-modern", "3.4", "")
	_, err = callTool(t, mc, "alpha_echo", map[string]any{"text": "hi"})
	require.NoError(t, err)
	res, err := callTool(t, mc, "mb_ask", map[string]any{})
	require.NoError(t, err)
	require.Equal(t, "asked 42", harness.Text(t, res))
	_, err = callTool(t, mc, "alpha_count", map[string]any{})
	require.Error(t, err, "denied on Modern too")

	checkCallRecords(t, sink, start, lc.ID(), alice)
	checkRateLimited(t, sink, start, lc, mc, alice)
	modernDenied := sink.await(t, "of the Modern denied call", 1, auditOf("tools/call", "tool", "alpha_count", "modern"))[0]
	assert.Equal(t, map[string]any{"allowed": false, "by": "authorization", "rule": 1.0}, modernDenied["decision"])
	assert.Equal(t, -32602.0, modernDenied["outcome"])
	assert.Equal(t, 400.0, modernDenied["status"])
	assert.Equal(t, "alpha", modernDenied["backend"])
	checkStreamAndRefusal(t, sink, v, token, start, alice)

	file, err := os.ReadFile(path)
	require.NoError(t, err)
	for _, secret := range []string{token, "cookie-value-4b1d", "hunter2-pw", "tok-arg-77", "s3cr3t-v", "Bearer"} {
		assert.NotContains(t, string(file), secret)
	}
}

// checkCallRecords checks the records of the Legacy call (session sid),
// the denied call, the Modern call and both MRTR rounds.
func checkCallRecords(t *testing.T, sink *auditSink, start time.Time, sid string, alice map[string]any) {
	t.Helper()
	allowed := map[string]any{"allowed": true, "by": "authorization", "rule": 0.0}
	denied := map[string]any{"allowed": false, "by": "authorization", "rule": 1.0}
	legacyCall := sink.await(t, "of the Legacy call", 1, auditOf("tools/call", "tool", "alpha_echo", "legacy"))[0]
	checkCommon(t, legacyCall, start, auditNode, auditTraceparent)
	assert.Equal(t, alice, legacyCall["principal"])
	assert.Equal(t, map[string]any{"name": "audit-legacy", "version": "1.2"}, legacyCall["client"])
	assert.Equal(t, sid, legacyCall["session"])
	assert.Equal(t, "alpha", legacyCall["backend"])
	assert.Equal(t, allowed, legacyCall["decision"])
	assert.Equal(t, "ok", legacyCall["outcome"])
	assert.Equal(t, 200.0, legacyCall["status"])
	assert.Equal(t, map[string]any{"text": "hi", "password": "[REDACTED]",
		"nested": map[string]any{"Token": "[REDACTED]", "list": []any{map[string]any{"SECRET": "[REDACTED]", "keep": 1.0}}}},
		legacyCall["arguments"], "redacted at every depth, keys matched case-insensitively")

	deniedCall := sink.await(t, "of the denied call", 1, auditOf("tools/call", "tool", "alpha_count", "legacy"))[0]
	checkCommon(t, deniedCall, start, auditNode, auditTraceparent)
	assert.Equal(t, alice, deniedCall["principal"])
	assert.Equal(t, sid, deniedCall["session"])
	assert.Equal(t, denied, deniedCall["decision"], "denied, by rule 1")
	assert.Equal(t, -32602.0, deniedCall["outcome"], "the unknown-tool error the client got")
	assert.Equal(t, "alpha", deniedCall["backend"], "the backend it was bound for (denied: not asked)")

	modernCall := sink.await(t, "of the Modern call", 1, auditOf("tools/call", "tool", "alpha_echo", "modern"))[0]
	checkCommon(t, modernCall, start, auditNode, auditTraceparent)
	assert.Equal(t, alice, modernCall["principal"])
	assert.Equal(t, map[string]any{"name": "audit-modern", "version": "3.4"}, modernCall["client"], "from the request's _meta")
	assert.Nil(t, modernCall["session"], "Modern has no session")
	assert.Equal(t, "alpha", modernCall["backend"])
	assert.Equal(t, allowed, modernCall["decision"])
	assert.Equal(t, "ok", modernCall["outcome"])
	assert.Equal(t, map[string]any{"text": "hi"}, modernCall["arguments"])

	rounds := sink.await(t, "of both MRTR rounds", 2, auditOf("tools/call", "tool", "mb_ask", "modern"))
	for _, r := range rounds {
		checkCommon(t, r, start, auditNode, auditTraceparent)
		assert.Equal(t, alice, r["principal"])
		assert.Equal(t, map[string]any{"name": "audit-modern", "version": "3.4"}, r["client"])
		assert.Equal(t, "mb", r["backend"])
		assert.Equal(t, allowed, r["decision"])
		assert.Equal(t, "ok", r["outcome"])
	}

}

// checkStreamAndRefusal opens and ends a listen stream and sends a request
// without a token, and checks their records.
func checkStreamAndRefusal(t *testing.T, sink *auditSink, v *harness.VMCP, token string, start time.Time, alice map[string]any) {
	t.Helper()
	listen := openSSE(t, post(t, v.URL, modernListen(41), map[string]string{"Authorization": "Bearer " + token, "Cookie": auditCookie,
		"Traceparent": auditTraceparent, "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"}))
	listen.next(t, "notifications/subscriptions/acknowledged")
	_ = listen.resp.Body.Close() // the client ends the stream
	stream := sink.await(t, "of the listen stream", 1, func(m map[string]any) bool { return m["method"] == "subscriptions/listen" })[0]
	checkCommon(t, stream, start, auditNode, auditTraceparent)
	assert.Equal(t, "41", stream["listen"])
	assert.Equal(t, alice, stream["principal"])

	a := send(t, http.MethodPost, v.URL, modernListen(42), map[string]string{"Cookie": auditCookie, "Mcp-Protocol-Version": "2026-07-28"})
	require.Equal(t, http.StatusUnauthorized, a.status)
	refused := sink.await(t, "of the refusal", 1, func(m map[string]any) bool { return m["status"] == 401.0 })[0]
	assert.Equal(t, "anonymous", refused["principal"])
	assert.Equal(t, map[string]any{"allowed": false, "by": "authentication"}, refused["decision"])
	assert.Equal(t, 401.0, refused["outcome"], "refused before JSON-RPC: the HTTP status")
}

// checkRateLimited makes a third and fourth alpha_echo call (Legacy,
// Modern) over the limit of two and checks their records: denied by
// rate_limits[0], the rate limit's error code, no backend asked.
func checkRateLimited(t *testing.T, sink *auditSink, start time.Time, lc, mc *mcp.ClientSession, alice map[string]any) {
	t.Helper()
	for _, cs := range []*mcp.ClientSession{lc, mc} {
		_, err := callTool(t, cs, "alpha_echo", map[string]any{"text": "again"})
		require.Error(t, err, "over the rate limit")
	}
	for _, rev := range []string{"legacy", "modern"} {
		rec := sink.await(t, "of the rate-limited "+rev+" call", 2, auditOf("tools/call", "tool", "alpha_echo", rev))[1]
		checkCommon(t, rec, start, auditNode, auditTraceparent)
		assert.Equal(t, alice, rec["principal"])
		assert.Equal(t, map[string]any{"allowed": false, "by": "rate_limit", "rule": 0.0}, rec["decision"])
		assert.Equal(t, float64(ratelimit.CodeRateLimited), rec["outcome"])
		assert.Equal(t, "alpha", rec["backend"], "the backend it was bound for (denied: not asked)")
	}
}
