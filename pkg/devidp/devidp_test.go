package devidp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/devidp"
	"github.com/zitadel/oidc/v3/pkg/oidc"
)

const aud = "https://vmcp.example.com/mcp"

func start(t *testing.T, cfg devidp.Config) *devidp.IdP {
	t.Helper()
	idp, err := devidp.Start(cfg)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, idp.Close()) })
	return idp
}

// claims verifies token as a relying party would (go-oidc: discovery,
// JWKS, RS256, iss, aud, exp) and returns its claims.
func claims(t *testing.T, idp *devidp.IdP, audience, token string) map[string]any {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	p, err := gooidc.NewProvider(ctx, idp.Issuer())
	require.NoError(t, err)
	v := p.Verifier(&gooidc.Config{ClientID: audience, SupportedSigningAlgs: []string{gooidc.RS256}})
	tok, err := v.Verify(ctx, token)
	require.NoError(t, err)
	var c map[string]any
	require.NoError(t, tok.Claims(&c))
	return c
}

// exchange posts an RFC 8693 token exchange as client id (secret
// "<id>-secret") and returns the status and the decoded body.
func exchange(t *testing.T, idp *devidp.IdP, id string, form url.Values) (int, map[string]any) {
	t.Helper()
	form.Set("grant_type", string(oidc.GrantTypeTokenExchange))
	form.Set("subject_token_type", string(oidc.AccessTokenType))
	req, err := http.NewRequest(http.MethodPost, idp.TokenURL(), strings.NewReader(form.Encode()))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.SetBasicAuth(id, id+"-secret")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	var body map[string]any
	require.NoError(t, json.NewDecoder(resp.Body).Decode(&body))
	return resp.StatusCode, body
}

func TestClientCredentialsTokenNamesTheClientAsSubject(t *testing.T) {
	t.Parallel()
	idp := start(t, devidp.Config{Audience: aud})
	ctx := context.Background()
	for _, who := range []string{"alice", "bob"} {
		tok, err := idp.ClientToken(ctx, who, "", "mcp.read", "mcp.write")
		require.NoError(t, err)
		c := claims(t, idp, aud, tok)
		require.Equal(t, who, c["sub"])
		require.Equal(t, "mcp.read mcp.write", c["scope"])
	}
	other, err := idp.ClientToken(ctx, "alice", "https://crm.example.com/mcp")
	require.NoError(t, err)
	require.Equal(t, "alice", claims(t, idp, "https://crm.example.com/mcp", other)["sub"], "the audience parameter is honoured")
}

func TestWrongSecretGetsNoToken(t *testing.T) {
	t.Parallel()
	idp := start(t, devidp.Config{Audience: aud, Clients: []devidp.Client{{ID: "alice", Secret: "right"}}})
	resp, err := http.PostForm(idp.TokenURL(), url.Values{"grant_type": {"client_credentials"},
		"client_id": {"alice"}, "client_secret": {"wrong"}})
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
}

func TestTokenExchangeKeepsTheSubjectForTheRequestedResource(t *testing.T) {
	t.Parallel()
	idp := start(t, devidp.Config{Audience: aud})
	alice, err := idp.ClientToken(context.Background(), "alice", "")
	require.NoError(t, err)
	const crm = "https://crm.example.com/mcp"
	status, body := exchange(t, idp, "vmcp", url.Values{"subject_token": {alice}, "resource": {crm}, "scope": {"crm.read"}})
	require.Equal(t, http.StatusOK, status, body)
	require.Equal(t, string(oidc.AccessTokenType), body["issued_token_type"])
	c := claims(t, idp, crm, body["access_token"].(string))
	require.Equal(t, "alice", c["sub"])
	require.Equal(t, "vmcp", c["client_id"])
	require.Equal(t, "crm.read", c["scope"])

	status, body = exchange(t, idp, "vmcp", url.Values{"subject_token": {alice}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_target", body["error"], "an exchange must name its audience")
	status, body = exchange(t, idp, "vmcp", url.Values{"subject_token": {alice + "x"}, "audience": {crm}})
	require.Equal(t, http.StatusBadRequest, status, "a tampered subject token: %v", body)
	status, body = exchange(t, idp, "alice", url.Values{"subject_token": {alice}, "audience": {crm}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "unauthorized_client", body["error"], "alice is not registered for token exchange")
}

func TestPolicyRefusesAGrantWithInvalidGrant(t *testing.T) {
	t.Parallel()
	idp := start(t, devidp.Config{Audience: aud, Policy: func(g devidp.Grant) error {
		if g.Type == oidc.GrantTypeTokenExchange && g.Subject == "bob" {
			return errors.New("bob may not reach the crm")
		}
		return nil
	}})
	ctx := context.Background()
	alice, err := idp.ClientToken(ctx, "alice", "")
	require.NoError(t, err)
	bob, err := idp.ClientToken(ctx, "bob", "")
	require.NoError(t, err)
	status, _ := exchange(t, idp, "vmcp", url.Values{"subject_token": {alice}, "audience": {"https://crm.example.com/mcp"}})
	require.Equal(t, http.StatusOK, status)
	status, body := exchange(t, idp, "vmcp", url.Values{"subject_token": {bob}, "audience": {"https://crm.example.com/mcp"}})
	require.Equal(t, http.StatusBadRequest, status)
	require.Equal(t, "invalid_grant", body["error"])
	require.Equal(t, "bob may not reach the crm", body["error_description"])
}

func TestNonLoopbackListenAddressIsRefused(t *testing.T) {
	t.Parallel()
	for _, addr := range []string{"0.0.0.0:0", ":0", "192.0.2.1:0", "example.com:0"} {
		_, err := devidp.Start(devidp.Config{Addr: addr})
		require.ErrorContains(t, err, "loopback", addr)
	}
}
