package vmcp_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	gooidc "github.com/coreos/go-oidc/v3/oidc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/devidp"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
	"github.com/zitadel/oidc/v3/pkg/oidc"
)

// Audiences of the backends' own tokens.
const (
	vaultAud = "https://vault.example.com/mcp"
	svcAud   = "https://svc.example.com/mcp"
)

// outboundIdP is a devidp provider for vmcp's audience; refuse(subject)
// reports whether an exchange for that user is refused (invalid_grant).
func outboundIdP(t *testing.T, refuse func(sub string) bool) *devidp.IdP {
	t.Helper()
	idp, err := devidp.Start(devidp.Config{Audience: audience, Policy: func(g devidp.Grant) error {
		if g.Type == oidc.GrantTypeTokenExchange && refuse(g.Subject) {
			return errors.New("not for this user")
		}
		return nil
	}})
	require.NoError(t, err)
	t.Cleanup(func() { _ = idp.Close() })
	return idp
}

// tokenChecker verifies tokens as a backend of audience aud does (go-oidc:
// signature, iss, aud, exp) and returns their sub ("" when invalid).
func tokenChecker(t *testing.T, idp *devidp.IdP, aud string) func(tok string) string {
	p, err := gooidc.NewProvider(t.Context(), idp.Issuer())
	require.NoError(t, err)
	v := p.Verifier(&gooidc.Config{ClientID: aud})
	return func(tok string) string {
		it, err := v.Verify(context.Background(), tok)
		if err != nil {
			return ""
		}
		return it.Subject
	}
}

// gatedFor makes g serve only valid tokens for aud whose subject is in subs
// (and not revoked).
func gatedFor(check func(string) string, revoked *sync.Map, subs ...string) func(string) bool {
	return func(tok string) bool {
		if _, gone := revoked.Load(tok); gone {
			return false
		}
		return slices.Contains(subs, check(tok))
	}
}

// outboundVMCP is a protected vmcp over open (no auth), vault
// (token_exchange) and svc (client_credentials).
func outboundVMCP(t *testing.T, idp *devidp.IdP, open, vault, svc *gated) *harness.VMCP {
	return outboundVMCPWith(t, vmcp.Options{}, idp, open, vault, svc)
}

// outboundVMCPWith is outboundVMCP with opts.
func outboundVMCPWith(t *testing.T, opts vmcp.Options, idp *devidp.IdP, open, vault, svc *gated) *harness.VMCP {
	auth := func(typ, aud string) *config.OutboundAuth {
		return &config.OutboundAuth{Type: typ, ClientID: "vmcp", ClientSecret: "vmcp-secret", Audience: aud}
	}
	return harness.StartVMCPWithOptions(t, opts, func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: audience,
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
	},
		config.Backend{Name: "open", URL: open.URL, Transport: config.TransportStreamableHTTP},
		config.Backend{Name: "vault", URL: vault.URL, Transport: config.TransportStreamableHTTP, Auth: auth(config.OutboundTokenExchange, vaultAud)},
		config.Backend{Name: "svc", URL: svc.URL, Transport: config.TransportStreamableHTTP, Auth: auth(config.OutboundClientCredentials, svcAud)})
}

// Before: a backend got the user's identity only by forward_headers:
// [Authorization], the client's own token passed through (MCP
// authorization forbids it). Now vault (token_exchange) gets, on every
// request of alice's backend session, a token the provider issued for
// vault's audience with alice's subject (initialize, initialized, lists,
// calls, GET, DELETE, the re-initialize after a 404): never the token alice sent vmcp,
// never bob's (whose exchange the provider refuses, so vault is not in his
// catalogue); svc (client_credentials) gets vmcp's own token on every
// connection; open gets no Authorization at all.
func TestTokenExchangeBackendGetsItsOwnTokenForTheUserOnEveryRequest(t *testing.T) {
	for rev, version := range revisions {
		t.Run(rev, func(t *testing.T) {
			idp := outboundIdP(t, func(sub string) bool { return sub == "bob" })
			tokA, err := idp.ClientToken(t.Context(), "alice", "")
			require.NoError(t, err)
			tokB, err := idp.ClientToken(t.Context(), "bob", "")
			require.NoError(t, err)
			vaultSub, svcSub := tokenChecker(t, idp, vaultAud), tokenChecker(t, idp, svcAud)
			open, vault, svc := startGated(t, "open"), startGated(t, "vault"), startGated(t, "svc")
			var revoked sync.Map
			vf, sf := gatedFor(vaultSub, &revoked, "alice"), gatedFor(svcSub, &revoked, "vmcp")
			vault.verify.Store(&vf)
			svc.verify.Store(&sf)
			v := outboundVMCP(t, idp, open, vault, svc)

			code, body := readyz(t, v.Base)
			require.Equal(t, http.StatusOK, code)
			require.Contains(t, backendStates(body), "vault=per-principal")

			a, _, err := connect(t, v.URL, tokA, version, nil)
			require.NoError(t, err)
			require.Equal(t, []string{"open_secret", "svc_secret", "vault_secret"}, harness.ToolNames(t, a), "vault saw %v", vault.values("Authorization"))
			out, err := call(t, a, "vault_secret")
			require.NoError(t, err)
			require.Equal(t, "secret:hi", out)
			inits := len(vault.values("Authorization")["initialize"])
			vault.expire.Store(true) // the next session POST gets 404: a new backend session
			_, err = call(t, a, "vault_secret")
			require.NoError(t, err)
			require.Greater(t, len(vault.values("Authorization")["initialize"]), inits, "re-initialized after the 404")
			_, err = call(t, a, "svc_secret")
			require.NoError(t, err)

			b, _, err := connect(t, v.URL, tokB, version, nil)
			require.NoError(t, err)
			require.Equal(t, []string{"open_secret", "svc_secret"}, harness.ToolNames(t, b), "bob's exchange is refused: no vault")
			_, err = call(t, b, "vault_secret")
			require.Error(t, err)

			if version != "" {
				vault.await(t, "GET", 1)
			}
			require.NoError(t, a.Close())
			if version != "" {
				vault.await(t, "DELETE", 1)
			}
			assertOwnTokens(t, vault, "alice", vaultSub, tokA, tokB)
			for kind, vs := range svc.values("Authorization") {
				for _, h := range vs {
					tok, _ := strings.CutPrefix(h, "Bearer ")
					assert.Equal(t, "vmcp", svcSub(tok), "svc %s carried vmcp's own token", kind)
				}
			}
			assert.True(t, only(open.values("Authorization"), ""), "open never gets a token: %v", open.values("Authorization"))
		})
	}
}

// assertOwnTokens checks that every request of each kind of a backend
// session reached g with a token for g's audience (check) naming sub, and
// never one of the client tokens.
func assertOwnTokens(t *testing.T, g *gated, sub string, check func(string) string, clientTokens ...string) {
	t.Helper()
	seen := g.values("Authorization")
	for _, kind := range []string{"initialize", "notifications/initialized", "tools/list", "tools/call", "GET", "DELETE"} {
		assert.NotEmpty(t, seen[kind], "the backend served %s: %v", kind, seen)
		for _, h := range seen[kind] {
			tok, _ := strings.CutPrefix(h, "Bearer ")
			assert.Equal(t, sub, check(tok), "%s carried the backend's token for %s", kind, sub)
			assert.NotContains(t, clientTokens, tok, "never a client's own token")
		}
	}
}

// The per-principal backend's prompts and resources were not published
// (only its tools were). Now alice lists and gets them on both revisions
// and completes its prompt's arguments; bob sees none of them.
func TestTokenExchangeBackendPromptsAndResourcesAreAlicesOnly(t *testing.T) {
	idp := outboundIdP(t, func(sub string) bool { return sub == "bob" })
	tokA, err := idp.ClientToken(t.Context(), "alice", "")
	require.NoError(t, err)
	tokB, err := idp.ClientToken(t.Context(), "bob", "")
	require.NoError(t, err)
	open, vault, svc := startGated(t, "open"), startGated(t, "vault"), startGated(t, "svc")
	var revoked sync.Map
	vf := gatedFor(tokenChecker(t, idp, vaultAud), &revoked, "alice")
	vault.verify.Store(&vf)
	v := outboundVMCP(t, idp, open, vault, svc)
	for rev, version := range revisions {
		t.Run(rev, func(t *testing.T) {
			a, _, err := connect(t, v.URL, tokA, version, nil)
			require.NoError(t, err)
			prompts, resources := listed(t, a)
			require.Contains(t, prompts, "vault_vault-prompt")
			require.Contains(t, resources, "doc://vault")
			pr, err := a.GetPrompt(ctx10(t), &mcp.GetPromptParams{Name: "vault_vault-prompt"})
			require.NoError(t, err)
			require.Equal(t, "vault prompt", pr.Description)
			rr, err := a.ReadResource(ctx10(t), &mcp.ReadResourceParams{URI: "doc://vault"})
			require.NoError(t, err)
			require.Equal(t, "vault doc", rr.Contents[0].Text)
			cr, err := a.Complete(ctx10(t), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "vault_vault-prompt"},
				Argument: mcp.CompleteParamsArgument{Name: "x", Value: "v"}})
			require.NoError(t, err)
			require.Equal(t, []string{"vault-v"}, cr.Completion.Values)

			b, _, err := connect(t, v.URL, tokB, version, nil)
			require.NoError(t, err)
			prompts, resources = listed(t, b)
			require.NotContains(t, prompts, "vault_vault-prompt")
			require.NotContains(t, resources, "doc://vault")
			_, err = b.GetPrompt(ctx10(t), &mcp.GetPromptParams{Name: "vault_vault-prompt"})
			require.Error(t, err)
		})
	}
}

// listed is the names of cs's prompts and the URIs of its resources.
func listed(t *testing.T, cs *mcp.ClientSession) (prompts, resources []string) {
	t.Helper()
	for p, err := range cs.Prompts(ctx10(t), nil) {
		require.NoError(t, err)
		prompts = append(prompts, p.Name)
	}
	for r, err := range cs.Resources(ctx10(t), nil) {
		require.NoError(t, err)
		resources = append(resources, r.URI)
	}
	return prompts, resources
}

// A token_exchange backend at the Modern revision (no sessions): alice's
// tools/list and tools/call reach it from both client revisions with a
// token for its audience and her subject (direct POSTs from Modern), and
// bob, whose exchange is refused, does not see it.
func TestTokenExchangeModernBackendIsCalledWithAlicesOwnTokenOnBothRevisions(t *testing.T) {
	idp := outboundIdP(t, func(sub string) bool { return sub == "bob" })
	tokA, err := idp.ClientToken(t.Context(), "alice", "")
	require.NoError(t, err)
	tokB, err := idp.ClientToken(t.Context(), "bob", "")
	require.NoError(t, err)
	check := tokenChecker(t, idp, vaultAud)
	open, vault, svc := startGated(t, "open"), startGatedMode(t, "vault", harness.Stateless), startGated(t, "svc")
	var revoked sync.Map
	vf := gatedFor(check, &revoked, "alice")
	vault.verify.Store(&vf)
	v := outboundVMCP(t, idp, open, vault, svc)
	for rev, version := range revisions {
		t.Run(rev, func(t *testing.T) {
			a, _, err := connect(t, v.URL, tokA, version, nil)
			require.NoError(t, err)
			require.Contains(t, harness.ToolNames(t, a), "vault_secret", "vault saw %v", vault.values("Authorization"))
			out, err := call(t, a, "vault_secret")
			require.NoError(t, err)
			require.Equal(t, "secret:hi", out)
			b, _, err := connect(t, v.URL, tokB, version, nil)
			require.NoError(t, err)
			require.NotContains(t, harness.ToolNames(t, b), "vault_secret")
		})
	}
	seen := vault.values("Authorization")
	require.NotEmpty(t, seen["tools/call"])
	for _, kind := range []string{"tools/list", "tools/call"} {
		for _, h := range seen[kind] {
			tok, _ := strings.CutPrefix(h, "Bearer ")
			assert.Equal(t, "alice", check(tok), "%s carried vault's token for alice", kind)
			assert.NotContains(t, []string{tokA, tokB}, tok)
		}
	}
}

// A Modern client that can be asked (elicitation) has its call to a
// Legacy backend parked on a pooled session keyed by its capabilities and
// b.Principal, which digested only forwarded headers: with no forwarded
// Authorization any more, alice's and bob's parked calls shared one
// pooled backend session, opened with alice's token. Each backend session
// now carries one principal's tokens only.
func TestParkedSessionsOfATokenExchangeBackendAreNotSharedByTwoUsers(t *testing.T) {
	idp := outboundIdP(t, func(string) bool { return false })
	check := tokenChecker(t, idp, vaultAud)
	open, vault, svc := startGated(t, "open"), startGated(t, "vault"), startGated(t, "svc")
	var revoked sync.Map
	vf := gatedFor(check, &revoked, "alice", "bob")
	vault.verify.Store(&vf)
	v := outboundVMCP(t, idp, open, vault, svc)
	asks := &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}}
	for range 2 {
		for _, who := range []string{"alice", "bob"} {
			tok, err := idp.ClientToken(t.Context(), who, "")
			require.NoError(t, err)
			cs, _, err := connect(t, v.URL, tok, "", asks)
			require.NoError(t, err)
			_, err = call(t, cs, "vault_secret")
			require.NoError(t, err)
		}
	}
	sessions := vault.bySession()
	require.NotEmpty(t, sessions)
	for id, hs := range sessions {
		subs := map[string]bool{}
		for _, h := range hs {
			subs[check(strings.TrimPrefix(h, "Bearer "))] = true
		}
		assert.Len(t, subs, 1, "backend session %s carried one user's tokens: %v", id, subs)
	}
}
