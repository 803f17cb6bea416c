package integration

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/devidp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// vmcp behind the local OpenID Provider `make run-auth` starts (pkg/devidp,
// zitadel/oidc's op): tokens come from its real token endpoint by
// client_credentials, and vmcp finds its keys by discovery. No token is
// 401 with a challenge; alice's token works on both revisions; bob cannot
// use alice's Legacy session; a token for another audience is refused.
func TestDevIdPTokensAuthenticateOnBothRevisions(t *testing.T) {
	t.Parallel()
	const aud = "https://vmcp.example.com/mcp"
	idp, err := devidp.Start(devidp.Config{Audience: aud})
	require.NoError(t, err)
	t.Cleanup(func() { _ = idp.Close() })
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := harness.StartVMCP(t, func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: aud, ResourceName: "vmcp",
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
	}, b.Config())
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	alice, err := idp.ClientToken(ctx, "alice", "")
	require.NoError(t, err)
	bob, err := idp.ClientToken(ctx, "bob", "")
	require.NoError(t, err)

	status, hdr := devidpPost(t, v.URL, "", modernListBody)
	require.Equal(t, http.StatusUnauthorized, status)
	require.Contains(t, hdr.Get("WWW-Authenticate"), `Bearer resource_metadata="https://vmcp.example.com/.well-known/oauth-protected-resource/mcp"`)

	legacy := clConnect(t, v.URL, clLegacy, false, &http.Client{Transport: &authtest.Bearer{Token: alice}})
	require.Equal(t, clLegacy, legacy.cs.InitializeResult().ProtocolVersion)
	require.Equal(t, []string{"alpha_echo"}, harness.ToolNames(t, legacy.cs))
	modern := clConnect(t, v.URL, "", false, &http.Client{Transport: &authtest.Bearer{Token: alice}})
	require.Equal(t, modernRevision, modern.cs.InitializeResult().ProtocolVersion)
	require.Equal(t, []string{"alpha_echo"}, harness.ToolNames(t, modern.cs))
	status, _ = devidpPost(t, v.URL, alice, modernListBody)
	require.Equal(t, http.StatusOK, status, "a raw Modern tools/list with alice's token")

	const list = `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`
	status, body := authSessionReq(t, http.MethodPost, v.URL, bob, legacy.cs.ID(), list)
	require.Equal(t, http.StatusForbidden, status, "bob on alice's session: %s", body)
	status, body = authSessionReq(t, http.MethodPost, v.URL, alice, legacy.cs.ID(), list)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, "alpha_echo")

	other, err := idp.ClientToken(ctx, "alice", "https://other.example.com/mcp")
	require.NoError(t, err)
	status, hdr = devidpPost(t, v.URL, other, modernListBody)
	require.Equal(t, http.StatusUnauthorized, status, "a token for another audience")
	require.Contains(t, hdr.Get("WWW-Authenticate"), `error="invalid_token"`)
}

// modernListBody is a self-contained 2026-07-28 tools/list.
const modernListBody = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{` +
	`"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`

// devidpPost sends one Modern request with token (none if empty) and
// returns the status and headers.
func devidpPost(t *testing.T, url, token, body string) (int, http.Header) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", modernRevision)
	req.Header.Set("Mcp-Method", "tools/list")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	return resp.StatusCode, resp.Header
}
