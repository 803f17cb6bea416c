package integration

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// authSessionReq sends one request of Legacy session sid with token; a GET
// is answered with its status only (its stream is closed at once).
func authSessionReq(t *testing.T, method, url, token, sid, body string) (int, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", sid)
	req.Header.Set("Mcp-Protocol-Version", clLegacy)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	if method == http.MethodGet && resp.StatusCode == http.StatusOK {
		return resp.StatusCode, ""
	}
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// The owner record in Redis carries the principal: on a node that does not
// own the session, another principal's POST, GET and DELETE get 403 before
// anything is forwarded; the owner's requests through that node are
// forwarded and served, and its session and stream are unaffected.
func TestClusterSessionBelongsToItsPrincipalOnEveryNode(t *testing.T) {
	const aud = "https://vmcp.example.com/mcp"
	idp := authtest.Start(t, aud)
	redisURL := clustertest.Standalone(t)
	prefix := redisURL.Prefix(t)
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) {
		harness.AddEcho(s, "echo")
		harness.AddCounter(s, "count")
	})
	withAuth := func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: aud, ResourceName: "vmcp",
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
	}
	n1 := clStartNodeWith(t, "n1", redisURL, prefix, false, withAuth, b.Config())
	n2 := clStartNodeWith(t, "n2", redisURL, prefix, false, withAuth, b.Config())
	alice, bob := idp.Token(t, "alice"), idp.Token(t, "bob")

	a := clConnect(t, n1.url, clLegacy, true, &http.Client{Transport: &authtest.Bearer{Token: alice}})
	sid := a.cs.ID()
	const count = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha_count","arguments":{}}}`
	before := n1.forwarded.Load()
	for _, m := range []string{http.MethodPost, http.MethodGet, http.MethodDelete} {
		status, body := authSessionReq(t, m, n2.url, bob, sid, count)
		require.Equal(t, http.StatusForbidden, status, "%s on a node that does not own the session: %s", m, body)
		status, _ = authSessionReq(t, m, n1.url, bob, sid, count)
		require.Equal(t, http.StatusForbidden, status, "%s on the owner", m)
	}
	require.Equal(t, before, n1.forwarded.Load(), "nothing of B's was forwarded to the owner")

	status, body := authSessionReq(t, http.MethodPost, n2.url, alice, sid, count)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"text":"1"`, "no call of B reached the session")
	require.Greater(t, n1.forwarded.Load(), before, "the owner's request was forwarded from n2")

	clAddTool(t, &clEnv{backend: b}, "late")
	a.awaitListChanged(t, 1, stateWait) // the owner's GET stream lives on

	// A session with no live GET stream: B cannot take it from either node.
	a2 := clConnect(t, n1.url, clLegacy, false, &http.Client{Transport: &authtest.Bearer{Token: alice}})
	status, _ = authSessionReq(t, http.MethodGet, n2.url, bob, a2.cs.ID(), "")
	require.Equal(t, http.StatusForbidden, status)
	status, _ = authSessionReq(t, http.MethodGet, n2.url, alice, a2.cs.ID(), "")
	require.Equal(t, http.StatusOK, status, "the owner opens its stream through another node")

	status, _ = authSessionReq(t, http.MethodPost, n2.url, bob, "no-such-session", count)
	require.Equal(t, http.StatusNotFound, status, "an unknown session stays 404")
}
