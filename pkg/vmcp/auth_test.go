package vmcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// audience is the protected vmcp's resource identifier in these tests.
const audience = "https://vmcp.example.com/mcp"

// revisions are the two eras every authentication case runs on.
var revisions = map[string]string{"modern": "", "legacy": "2025-11-25"}

// protected starts a backend (alpha: echo, count) and a vmcp requiring
// tokens from idp for audience with scope mcp:tools.
func protected(t *testing.T, idp *authtest.IdP, mutate func(*config.Config)) (*harness.VMCP, *harness.Backend) {
	t.Helper()
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) {
		harness.AddEcho(s, "echo")
		harness.AddCounter(s, "count")
	})
	v := harness.StartVMCP(t, func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: audience, RequiredScopes: []string{"mcp:tools"},
			ResourceName: "test vmcp", Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Nanosecond)}
		if mutate != nil {
			mutate(c)
		}
	}, b.Config())
	return v, b
}

// seen records every response status and challenge a client got.
type seen struct {
	mu        sync.Mutex
	statuses  []int
	challenge string
}

func (s *seen) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := http.DefaultTransport.RoundTrip(r)
	if err == nil {
		s.mu.Lock()
		s.statuses = append(s.statuses, resp.StatusCode)
		if c := resp.Header.Get("WWW-Authenticate"); c != "" {
			s.challenge = c
		}
		s.mu.Unlock()
	}
	return resp, err
}

// connect opens a go-sdk client session to endpoint sending token (none if
// empty) at version, recording what it saw.
func connect(t *testing.T, endpoint, token, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, *seen, error) {
	t.Helper()
	return connectWith(t, &mcp.StreamableClientTransport{Endpoint: endpoint, MaxRetries: -1}, token, version, opts)
}

// connectWith is connect over tr (its HTTPClient is set here).
func connectWith(t *testing.T, tr *mcp.StreamableClientTransport, token, version string, opts *mcp.ClientOptions) (*mcp.ClientSession, *seen, error) {
	t.Helper()
	rec := &seen{}
	hc := &http.Client{Transport: rec}
	if token != "" {
		hc.Transport = &authtest.Bearer{Token: token, Base: rec}
	}
	if opts == nil {
		opts = &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	tr.HTTPClient = hc
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "auth-test", Version: "1"}, opts).Connect(ctx,
		tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err == nil {
		t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, rec, err
}

func call(t *testing.T, cs *mcp.ClientSession, tool string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "hi"}})
	if err != nil {
		return "", err
	}
	return harness.Text(t, res), nil
}

func TestBadTokensAre401AndMissingScopeIs403OnBothRevisions(t *testing.T) {
	idp := authtest.Start(t, audience)
	v, _ := protected(t, idp, nil)
	valid := idp.Token(t, "alice", "mcp:tools")
	claims := func(edit func(jwt.MapClaims)) jwt.MapClaims {
		c := idp.Claims("alice", "mcp:tools")
		edit(c)
		return c
	}
	cases := []struct {
		name   string
		token  string
		status int
		error  string // error= in the challenge; "" for none
	}{
		{"no token", "", http.StatusUnauthorized, ""},
		{"expired", idp.Sign(t, claims(func(c jwt.MapClaims) { c["exp"] = time.Now().Add(-time.Hour).Unix() })), http.StatusUnauthorized, "invalid_token"},
		{"wrong audience", idp.Sign(t, claims(func(c jwt.MapClaims) { c["aud"] = "https://other.example.com/mcp" })), http.StatusUnauthorized, "invalid_token"},
		{"wrong issuer", idp.Sign(t, claims(func(c jwt.MapClaims) { c["iss"] = "https://evil.example.com" })), http.StatusUnauthorized, "invalid_token"},
		{"alg none", idp.SignNone(t, claims(func(jwt.MapClaims) {})), http.StatusUnauthorized, "invalid_token"},
		{"HS256 keyed with the public key", idp.SignHS256WithPublicKey(t, claims(func(jwt.MapClaims) {})), http.StatusUnauthorized, "invalid_token"},
		{"tampered", authtest.Tamper(t, valid, claims(func(c jwt.MapClaims) { c["sub"] = "admin" })), http.StatusUnauthorized, "invalid_token"},
		{"garbage", "not.a.jwt", http.StatusUnauthorized, "invalid_token"},
		{"missing scope", idp.Token(t, "alice", "mcp:other"), http.StatusForbidden, "insufficient_scope"},
	}
	for rev, version := range revisions {
		t.Run(rev, func(t *testing.T) {
			cs, _, err := connect(t, v.URL, valid, version, nil)
			require.NoError(t, err, "a valid token works")
			got, err := call(t, cs, "alpha_echo")
			require.NoError(t, err)
			require.Equal(t, "echo:hi", got)
			for _, tc := range cases {
				t.Run(tc.name, func(t *testing.T) {
					_, rec, err := connect(t, v.URL, tc.token, version, nil)
					require.Error(t, err)
					require.Contains(t, rec.statuses, tc.status)
					require.NotContains(t, rec.statuses, http.StatusOK, "nothing was served")
					assert.Contains(t, rec.challenge, `resource_metadata="https://vmcp.example.com/.well-known/oauth-protected-resource/mcp"`)
					assert.Contains(t, rec.challenge, `scope="mcp:tools"`)
					if tc.error == "" {
						assert.NotContains(t, rec.challenge, "error=")
					} else {
						assert.Contains(t, rec.challenge, `error="`+tc.error+`"`)
					}
				})
			}
		})
	}
}

func TestTokenInTheQueryStringIsRefused(t *testing.T) {
	idp := authtest.Start(t, audience)
	v, _ := protected(t, idp, nil)
	valid := idp.Token(t, "alice", "mcp:tools")
	for rev, version := range revisions {
		t.Run(rev, func(t *testing.T) {
			_, rec, err := connect(t, v.URL+"?access_token="+valid, valid, version, nil)
			require.Error(t, err)
			require.Contains(t, rec.statuses, http.StatusBadRequest)
			require.Contains(t, rec.challenge, `error="invalid_request"`)
		})
	}
}

func TestRotatedSigningKeyIsPickedUp(t *testing.T) {
	idp := authtest.Start(t, audience)
	v, _ := protected(t, idp, nil)
	for rev, version := range revisions {
		t.Run(rev, func(t *testing.T) {
			_, _, err := connect(t, v.URL, idp.Token(t, "alice", "mcp:tools"), version, nil)
			require.NoError(t, err)
			before := idp.JWKSFetches()
			idp.Rotate(t)
			cs, _, err := connect(t, v.URL, idp.Token(t, "alice", "mcp:tools"), version, nil)
			require.NoError(t, err, "a token signed with the new key (new kid) works")
			_, err = call(t, cs, "alpha_echo")
			require.NoError(t, err)
			require.Greater(t, idp.JWKSFetches(), before, "the JWKS was refetched for the new kid")
		})
	}
}

func TestTokensTheProviderIssuesWork(t *testing.T) {
	idp := authtest.Start(t, audience)
	v, _ := protected(t, idp, func(c *config.Config) { c.Auth.RequiredScopes = nil }) // mockoidc grants no scope claim
	for rev, version := range revisions {
		t.Run(rev, func(t *testing.T) {
			cs, _, err := connect(t, v.URL, idp.CodeFlowToken(t), version, nil)
			require.NoError(t, err)
			_, err = call(t, cs, "alpha_echo")
			require.NoError(t, err)
		})
	}
}

func TestProtectedResourceMetadataIsServed(t *testing.T) {
	idp := authtest.Start(t, audience)
	v, _ := protected(t, idp, nil)
	for _, path := range []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"} {
		resp, err := http.Get(v.Base + path)
		require.NoError(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, path)
		var m map[string]any
		require.NoError(t, json.Unmarshal(body, &m))
		require.Equal(t, map[string]any{
			"resource":                 audience,
			"authorization_servers":    []any{idp.Issuer()},
			"scopes_supported":         []any{"mcp:tools"},
			"bearer_methods_supported": []any{"header"},
			"resource_name":            "test vmcp",
		}, m, path)
	}

	open := harness.StartVMCP(t, nil, harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") }).Config())
	resp, err := http.Get(open.Base + "/.well-known/oauth-protected-resource")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusNotFound, resp.StatusCode, "no auth section: no metadata")
	_, _, err = connect(t, open.URL, "", "", nil)
	require.NoError(t, err, "no auth section: no token needed")
}

// raw sends one request of a Legacy session with token and returns the
// response (body read and closed).
func raw(t *testing.T, method, url, token, session, body string) (*http.Response, string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if method == http.MethodGet {
		req.Header.Set("Accept", "text/event-stream")
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	return resp, string(b)
}

const countCall = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha_count","arguments":{}}}`
