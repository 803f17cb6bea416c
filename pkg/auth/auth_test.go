package auth_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/telemetry"
)

const audience = "http://127.0.0.1:1/mcp"

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) { c.mu.Lock(); c.t = c.t.Add(d); c.mu.Unlock() }

// serve runs one request with token through a.Require and returns the
// recorder and the principal the handler saw (zero if not reached).
func serve(a *auth.Authenticator, token, query string) (*httptest.ResponseRecorder, identity.Principal) {
	var got identity.Principal
	h := a.Require(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got = identity.From(r.Context()) }))
	r := httptest.NewRequest(http.MethodPost, "/mcp"+query, nil)
	if token != "" {
		r.Header.Set("Authorization", "Bearer "+token)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w, got
}

func newAuth(t *testing.T, idp *authtest.IdP, mutate func(*auth.Options)) *auth.Authenticator {
	t.Helper()
	o := auth.Options{Issuer: idp.Issuer(), Audience: audience, Leeway: 5 * time.Second, ResourceName: "vmcp"}
	if mutate != nil {
		mutate(&o)
	}
	a, err := auth.New(o)
	require.NoError(t, err)
	return a
}

func TestScopesFromScopeOrScpAndChallengeNamesThem(t *testing.T) {
	idp := authtest.Start(t, audience)
	rejected := telemetry.NewAuthRejected()
	a := newAuth(t, idp, func(o *auth.Options) { o.RequiredScopes = []string{"mcp:tools", "mcp:read"}; o.Rejected = rejected })

	tok := idp.Token(t, "alice", "mcp:read", "mcp:tools", "other")
	w, p := serve(a, tok, "")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	assert.Equal(t, identity.Principal{Issuer: idp.Issuer(), Subject: "alice", Claims: p.Claims}.WithToken(tok), p)
	assert.NotContains(t, fmt.Sprintf("%v %+v %#v %s", p, p, p, p), tok, "the principal prints without its token")
	assert.Equal(t, "alice", p.Claims["sub"])

	c := idp.Claims("bob")
	c["scp"] = []string{"mcp:tools", "mcp:read"}
	w, _ = serve(a, idp.Sign(t, c), "")
	require.Equal(t, http.StatusOK, w.Code, "scp array is accepted: %s", w.Body.String())

	before := testutil.ToFloat64(rejected.WithLabelValues("insufficient_scope"))
	w, p = serve(a, idp.Token(t, "carol", "mcp:read"), "")
	require.Equal(t, http.StatusForbidden, w.Code)
	assert.Equal(t, before+1, testutil.ToFloat64(rejected.WithLabelValues("insufficient_scope")), "counted")
	assert.True(t, p.Anonymous(), "the handler was not reached")
	ch := w.Header().Get("WWW-Authenticate")
	assert.Contains(t, ch, `error="insufficient_scope"`)
	assert.Contains(t, ch, `scope="mcp:tools mcp:read"`)
	assert.Contains(t, ch, `resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp"`)
	assert.Contains(t, w.Body.String(), "lacks scope mcp:tools")
}

func TestNotYetValidTokenIsRefusedBeyondTheLeeway(t *testing.T) {
	idp := authtest.Start(t, audience)
	a := newAuth(t, idp, nil)
	c := idp.Claims("alice")
	c["nbf"] = time.Now().Add(time.Minute).Unix() // go-oidc alone allows 5 minutes
	w, _ := serve(a, idp.Sign(t, c), "")
	require.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Contains(t, w.Header().Get("WWW-Authenticate"), `error="invalid_token"`)

	c["nbf"] = time.Now().Add(2 * time.Second).Unix() // within the 5s leeway
	w, _ = serve(a, idp.Sign(t, c), "")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())

	c = idp.Claims("alice")
	c["exp"] = time.Now().Add(-2 * time.Second).Unix() // expired, within the leeway
	w, _ = serve(a, idp.Sign(t, c), "")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	delete(c, "exp")
	w, _ = serve(a, idp.Sign(t, c), "")
	require.Equal(t, http.StatusUnauthorized, w.Code, "a token without exp is refused")
}

func TestMalformedRequestsGetTheRFC6750Answers(t *testing.T) {
	idp := authtest.Start(t, audience)
	a := newAuth(t, idp, nil)
	good := idp.Token(t, "alice")

	w, _ := serve(a, "", "")
	require.Equal(t, http.StatusUnauthorized, w.Code)
	assert.Equal(t, `Bearer resource_metadata="http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp"`, w.Header().Get("WWW-Authenticate"),
		"no token: no error code (RFC 6750 §3.1)")

	w, _ = serve(a, good, "?access_token="+good)
	require.Equal(t, http.StatusBadRequest, w.Code, "a token in the query string is refused even with a valid header")
	assert.Contains(t, w.Header().Get("WWW-Authenticate"), `error="invalid_request"`)

	w, _ = serve(a, "", "?access_token="+good)
	require.Equal(t, http.StatusBadRequest, w.Code)

	h := a.Require(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { t.Error("reached") }))
	r := httptest.NewRequest(http.MethodGet, "/mcp", nil)
	r.Header.Add("Authorization", "Bearer "+good)
	r.Header.Add("Authorization", "Bearer "+good)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	require.Equal(t, http.StatusBadRequest, rec.Code)

	r = httptest.NewRequest(http.MethodDelete, "/mcp", nil)
	r.Header.Set("Authorization", "Basic YTpi")
	rec = httptest.NewRecorder()
	h.ServeHTTP(rec, r)
	require.Equal(t, http.StatusUnauthorized, rec.Code)
}

// An attacker minting tokens with random key IDs must not make vmcp fetch
// the issuer's JWKS for each: one refetch per interval.
func TestUnknownKeyIDRefetchesTheJWKSAtMostOncePerInterval(t *testing.T) {
	idp := authtest.Start(t, audience)
	clk := &clock{t: time.Now()}
	a := newAuth(t, idp, func(o *auth.Options) {
		o.JWKSURL = idp.JWKSURL()
		o.JWKSRefreshInterval = time.Minute
		o.Now = clk.now
	})
	w, _ := serve(a, idp.Token(t, "alice"), "")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.EqualValues(t, 1, idp.JWKSFetches())

	idp.Rotate(t)
	rotated := idp.Token(t, "alice")
	for range 5 {
		w, _ = serve(a, rotated, "")
		require.Equal(t, http.StatusUnauthorized, w.Code, "within the interval the new key is not fetched")
	}
	require.EqualValues(t, 1, idp.JWKSFetches())

	clk.add(time.Minute)
	w, _ = serve(a, rotated, "")
	require.Equal(t, http.StatusOK, w.Code, "after the interval the rotated key is picked up: %s", w.Body.String())
	require.EqualValues(t, 2, idp.JWKSFetches())
	w, _ = serve(a, rotated, "")
	require.Equal(t, http.StatusOK, w.Code)
	require.EqualValues(t, 2, idp.JWKSFetches(), "known keys need no fetch")
}

func TestUnreachableIssuerIs503NotAnInvalidToken(t *testing.T) {
	idp := authtest.Start(t, audience)
	token := idp.Token(t, "alice")
	c := idp.Claims("alice")
	c["iss"] = "http://127.0.0.1:1/nowhere"
	a := newAuth(t, idp, func(o *auth.Options) { o.Issuer = "http://127.0.0.1:1/nowhere" })
	w, _ := serve(a, idp.Sign(t, c), "")
	require.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Contains(t, w.Body.String(), "discovery")
	assert.NotContains(t, w.Body.String(), "127.0.0.1:1", "the 503 body names what failed, not internal addresses")
	assert.NotEmpty(t, w.Header().Get("Retry-After"))

	a = newAuth(t, idp, func(o *auth.Options) { o.JWKSURL = "http://127.0.0.1:1/keys" })
	w, _ = serve(a, token, "")
	require.Equal(t, http.StatusServiceUnavailable, w.Code)
	assert.Contains(t, w.Body.String(), "JWKS")
	assert.NotContains(t, w.Body.String(), "127.0.0.1:1")
}

// Regression: while the issuer was unreachable, a token no key could make
// valid (garbage, alg none, another issuer, another audience, expired) got
// 503 "try later" instead of 401.
func TestImpossibleTokenIs401WhileIssuerUnreachable(t *testing.T) {
	idp := authtest.Start(t, audience)
	const nowhere = "http://127.0.0.1:1/nowhere"
	a := newAuth(t, idp, func(o *auth.Options) { o.Issuer = nowhere })
	claims := func(k string, v any) map[string]any {
		c := idp.Claims("alice")
		c["iss"] = nowhere
		if k != "" {
			c[k] = v
		}
		return c
	}
	for name, tok := range map[string]string{
		"garbage":  "not-a-jwt",
		"none":     idp.SignNone(t, claims("", nil)),
		"issuer":   idp.Sign(t, claims("iss", "https://elsewhere.example.com")),
		"audience": idp.Sign(t, claims("aud", "https://other.example.com")),
		"expired":  idp.Sign(t, claims("exp", time.Now().Add(-time.Hour).Unix())),
	} {
		w, _ := serve(a, tok, "")
		assert.Equal(t, http.StatusUnauthorized, w.Code, "%s: %s", name, w.Body.String())
	}
	w, _ := serve(a, idp.Sign(t, claims("", nil)), "")
	assert.Equal(t, http.StatusServiceUnavailable, w.Code, "a plausible token still waits for discovery")
}

func TestMetadataIsRFC9728(t *testing.T) {
	a, err := auth.New(auth.Options{Issuer: "https://idp.example.com", Audience: "https://vmcp.example.com/tenant/mcp",
		RequiredScopes: []string{"mcp"}, ResourceName: "Team vmcp"})
	require.NoError(t, err)
	assert.Equal(t, "https://vmcp.example.com/.well-known/oauth-protected-resource/tenant/mcp", a.MetadataURL())
	assert.Equal(t, []string{"/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
		"/.well-known/oauth-protected-resource/tenant/mcp"}, a.MetadataPaths("/mcp"))

	w := httptest.NewRecorder()
	a.MetadataHandler().ServeHTTP(w, httptest.NewRequest(http.MethodGet, auth.WellKnownPath, nil))
	require.Equal(t, http.StatusOK, w.Code)
	var m map[string]any
	require.NoError(t, json.Unmarshal(w.Body.Bytes(), &m))
	assert.Equal(t, map[string]any{
		"resource":                 "https://vmcp.example.com/tenant/mcp",
		"authorization_servers":    []any{"https://idp.example.com"},
		"scopes_supported":         []any{"mcp"},
		"bearer_methods_supported": []any{"header"},
		"resource_name":            "Team vmcp",
	}, m)

	_, err = auth.New(auth.Options{Issuer: "https://idp", Audience: "api://vmcp"})
	require.Error(t, err)
}

func TestDescriptionsStayQuotable(t *testing.T) {
	idp := authtest.Start(t, audience)
	a := newAuth(t, idp, nil)
	c := idp.Claims("alice")
	c["aud"] = `evil" , error="none`
	w, _ := serve(a, idp.Sign(t, c), "")
	require.Equal(t, http.StatusUnauthorized, w.Code)
	ch := w.Header().Get("WWW-Authenticate")
	assert.Equal(t, 6, strings.Count(ch, `"`), "no quote injected into the challenge: %s", ch)
}

// Regression: a token refused before its signature is checked (alg none)
// on a fresh authenticator, which has not fetched the JWKS yet, is an
// invalid token (401), not an unavailable issuer (503).
func TestFirstTokenRejectedBeforeAnyKeyFetchIs401Not503(t *testing.T) {
	idp := authtest.Start(t, audience)
	a := newAuth(t, idp, func(o *auth.Options) { o.JWKSURL = idp.JWKSURL() })
	w, _ := serve(a, idp.SignNone(t, idp.Claims("alice")), "")
	require.Equal(t, http.StatusUnauthorized, w.Code, w.Body.String())
	require.Zero(t, idp.JWKSFetches())
}

// Regression: a token signed with a rotated key while the issuer's JWKS
// was unreachable got 401 invalid_token (the token may be fine: 503).
func TestRotatedKeyWhileJWKSUnreachableWas401(t *testing.T) {
	idp := authtest.Start(t, audience)
	var down atomic.Bool
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if down.Load() {
			http.Error(w, "issuer down", http.StatusBadGateway)
			return
		}
		resp, err := http.Get(idp.JWKSURL())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.Copy(w, resp.Body)
	}))
	t.Cleanup(jwks.Close)
	clk := &clock{t: time.Now()}
	a := newAuth(t, idp, func(o *auth.Options) {
		o.JWKSURL, o.JWKSRefreshInterval, o.Now = jwks.URL, time.Minute, clk.now
	})
	w, _ := serve(a, idp.Token(t, "alice"), "")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())

	down.Store(true)
	idp.Rotate(t)
	rotated := idp.Token(t, "alice")
	clk.add(time.Minute) // the refetch interval has passed: the unknown kid is fetched, and that fails
	for range 2 {        // the failed fetch, then within the refetch interval
		w, _ = serve(a, rotated, "")
		require.Equal(t, http.StatusServiceUnavailable, w.Code, w.Body.String())
		assert.NotEmpty(t, w.Header().Get("Retry-After"))
	}
	down.Store(false)
	clk.add(time.Minute)
	w, _ = serve(a, rotated, "")
	require.Equal(t, http.StatusOK, w.Code, "the issuer is back: %s", w.Body.String())
	c := idp.Claims("mallory")
	w, _ = serve(a, authtest.Tamper(t, rotated, c), "")
	require.Equal(t, http.StatusUnauthorized, w.Code, "with the JWKS reachable a bad signature is 401")
}
