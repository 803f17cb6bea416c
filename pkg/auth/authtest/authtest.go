// Package authtest runs a real OpenID Provider in process for tests
// (github.com/oauth2-proxy/mockoidc: discovery, JWKS, authorization code
// flow) and mints access tokens with its keys, including the bad ones an
// attacker would try: expired, wrong audience or issuer, alg none, HS256
// keyed with the public key, tampered. Test code only.
package authtest

import (
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	"github.com/oauth2-proxy/mockoidc"
)

// IdP is a running OpenID Provider. Its JWKS publishes every key it has
// had (rotation adds one); tokens are signed with the newest.
type IdP struct {
	Mock     *mockoidc.MockOIDC
	Audience string // aud of tokens minted by Token

	mu        sync.Mutex
	signing   *mockoidc.Keypair
	published []*mockoidc.Keypair
	fetches   atomic.Int64
}

// Start runs an IdP on a loopback port until the test ends; audience is
// the aud of the tokens it mints and issues (it is also the client ID of
// the authorization code flow, since mockoidc puts that in aud).
func Start(t testing.TB, audience string) *IdP {
	t.Helper()
	m, err := mockoidc.NewServer(nil)
	if err != nil {
		t.Fatalf("authtest: %v", err)
	}
	if audience != "" {
		m.ClientID = audience // the code flow's access tokens name the client as aud
	}
	p := &IdP{Mock: m, Audience: audience, signing: m.Keypair, published: []*mockoidc.Keypair{m.Keypair}}
	if err := m.AddMiddleware(p.jwks); err != nil {
		t.Fatalf("authtest: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("authtest: %v", err)
	}
	if err := m.Start(ln, nil); err != nil {
		t.Fatalf("authtest: %v", err)
	}
	t.Cleanup(func() {
		m.Server.SetKeepAlivesEnabled(false)
		_ = m.Server.Close()
	})
	return p
}

// jwks serves the JWKS with every published key and counts fetches.
func (p *IdP) jwks(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != mockoidc.JWKSEndpoint {
			next.ServeHTTP(w, r)
			return
		}
		p.fetches.Add(1)
		p.mu.Lock()
		set := jose.JSONWebKeySet{}
		for _, k := range p.published {
			kid, _ := k.KeyID()
			set.Keys = append(set.Keys, jose.JSONWebKey{Key: k.PublicKey, KeyID: kid, Algorithm: string(jose.RS256), Use: "sig"})
		}
		p.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(set)
	})
}

// Issuer is the IdP's issuer URL (iss of its tokens).
func (p *IdP) Issuer() string { return p.Mock.Issuer() }

// JWKSURL is the IdP's jwks_uri.
func (p *IdP) JWKSURL() string { return p.Mock.JWKSEndpoint() }

// JWKSFetches counts requests to the JWKS so far.
func (p *IdP) JWKSFetches() int64 { return p.fetches.Load() }

// Claims are valid access token claims for sub: this issuer, Audience,
// issued now, expiring in ten minutes, with scopes in scope.
func (p *IdP) Claims(sub string, scopes ...string) jwt.MapClaims {
	now := time.Now()
	c := jwt.MapClaims{
		"iss": p.Issuer(), "aud": p.Audience, "sub": sub,
		"iat": now.Unix(), "nbf": now.Unix(), "exp": now.Add(10 * time.Minute).Unix(),
	}
	if len(scopes) > 0 {
		c["scope"] = strings.Join(scopes, " ")
	}
	return c
}

// Token is a valid access token for sub with scopes.
func (p *IdP) Token(t testing.TB, sub string, scopes ...string) string {
	return p.Sign(t, p.Claims(sub, scopes...))
}

// Sign signs claims (RS256) with the current key, naming its kid.
func (p *IdP) Sign(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	p.mu.Lock()
	k := p.signing
	p.mu.Unlock()
	s, err := k.SignJWT(claims)
	if err != nil {
		t.Fatalf("authtest: sign: %v", err)
	}
	return s
}

// Rotate makes a new signing key, publishes it in the JWKS (keeping the
// old ones) and returns its kid.
func (p *IdP) Rotate(t testing.TB) string {
	t.Helper()
	k, err := mockoidc.RandomKeypair(2048)
	if err != nil {
		t.Fatalf("authtest: %v", err)
	}
	kid, _ := k.KeyID()
	p.mu.Lock()
	p.signing, p.published = k, append(p.published, k)
	p.mu.Unlock()
	return kid
}

// SignNone is claims with alg "none" and no signature.
func (p *IdP) SignNone(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	s, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SignedString(jwt.UnsafeAllowNoneSignatureType)
	if err != nil {
		t.Fatalf("authtest: %v", err)
	}
	return s
}

// SignHS256WithPublicKey is claims signed HS256 with the IdP's public key
// (PEM) as the HMAC secret, naming its kid: the algorithm confusion attack.
func (p *IdP) SignHS256WithPublicKey(t testing.TB, claims jwt.MapClaims) string {
	t.Helper()
	p.mu.Lock()
	k := p.signing
	p.mu.Unlock()
	der, err := x509.MarshalPKIXPublicKey(k.PublicKey)
	if err != nil {
		t.Fatalf("authtest: %v", err)
	}
	secret := pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der})
	tok := jwt.NewWithClaims(jwt.SigningMethodHS256, claims)
	tok.Header["kid"], _ = k.KeyID()
	s, err := tok.SignedString(secret)
	if err != nil {
		t.Fatalf("authtest: %v", err)
	}
	return s
}

// Tamper replaces the payload of a signed token with claims, keeping the
// header and the (now wrong) signature.
func Tamper(t testing.TB, token string, claims jwt.MapClaims) string {
	t.Helper()
	parts := strings.Split(token, ".")
	if len(parts) != 3 {
		t.Fatalf("authtest: not a JWS: %q", token)
	}
	body, err := jwt.NewWithClaims(jwt.SigningMethodNone, claims).SigningString()
	if err != nil {
		t.Fatalf("authtest: %v", err)
	}
	return parts[0] + "." + strings.Split(body, ".")[1] + "." + parts[2]
}

// CodeFlowToken runs the IdP's real authorization code flow (authorize,
// then the token endpoint with the client's credentials) and returns the
// access token it issues: aud is Mock.ClientID (the audience), no scope,
// signed with the provider's own key.
func (p *IdP) CodeFlowToken(t testing.TB) string {
	t.Helper()
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	q := url.Values{"scope": {"openid"}, "state": {"s"}, "client_id": {p.Mock.ClientID},
		"response_type": {"code"}, "redirect_uri": {"http://127.0.0.1/cb"}}
	resp, err := noRedirect.Get(p.Mock.AuthorizationEndpoint() + "?" + q.Encode())
	if err != nil {
		t.Fatalf("authtest: authorize: %v", err)
	}
	resp.Body.Close()
	loc, err := url.Parse(resp.Header.Get("Location"))
	if err != nil || loc.Query().Get("code") == "" {
		t.Fatalf("authtest: authorize gave %s, Location %q", resp.Status, resp.Header.Get("Location"))
	}
	form := url.Values{"grant_type": {"authorization_code"}, "code": {loc.Query().Get("code")},
		"client_id": {p.Mock.ClientID}, "client_secret": {p.Mock.ClientSecret}, "redirect_uri": {"http://127.0.0.1/cb"}}
	resp, err = http.PostForm(p.Mock.TokenEndpoint(), form)
	if err != nil {
		t.Fatalf("authtest: token: %v", err)
	}
	defer resp.Body.Close()
	var tr struct {
		AccessToken string `json:"access_token"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&tr); err != nil || tr.AccessToken == "" {
		t.Fatalf("authtest: token endpoint gave %s: %v", resp.Status, err)
	}
	return tr.AccessToken
}

// Bearer is an http.RoundTripper adding Authorization: Bearer Token to
// every request (nil Base: http.DefaultTransport).
type Bearer struct {
	Token string
	Base  http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (b *Bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	base := b.Base
	if base == nil {
		base = http.DefaultTransport
	}
	return base.RoundTrip(r)
}
