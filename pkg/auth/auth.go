// Package auth makes vmcp an OAuth 2.1 resource server (MCP authorization,
// 2025-11-25 and 2026-07-28): every request to the MCP endpoint carries a
// JWT access token in `Authorization: Bearer` (RFC 6750 §2.1; the query
// string form is refused), validated with go-oidc against one issuer: its
// JWKS signature (asymmetric algorithms only), iss, aud (the configured
// audience, RFC 8707), exp and nbf with a small leeway, and the required
// scopes. Failures answer 401 or 403 with a WWW-Authenticate challenge
// naming the RFC 9728 protected resource metadata, which Metadata serves.
// On success the principal (iss, sub, claims) is put on the request's
// context with identity.With.
package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/prometheus/client_golang/prometheus"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/go-jose/go-jose/v4"
	"github.com/vmcp/vmcp/pkg/identity"
)

// algorithms are the JWS algorithms a token may be signed with: asymmetric
// only. "none" and HMAC (HS256/384/512) are never accepted, so a token
// "signed" with the issuer's public key as an HMAC secret fails.
var algorithms = []string{
	oidc.RS256, oidc.RS384, oidc.RS512,
	oidc.PS256, oidc.PS384, oidc.PS512,
	oidc.ES256, oidc.ES384, oidc.ES512,
	oidc.EdDSA,
}

var allowedAlgs = func() []jose.SignatureAlgorithm {
	out := make([]jose.SignatureAlgorithm, len(algorithms))
	for i, a := range algorithms {
		out[i] = jose.SignatureAlgorithm(a)
	}
	return out
}()

// Options configure an Authenticator; Issuer and Audience are required.
type Options struct {
	Issuer         string        // OpenID Provider; discovery from Issuer/.well-known/openid-configuration
	Audience       string        // required aud; also the metadata's resource (an absolute URL)
	JWKSURL        string        // overrides the discovered jwks_uri (no discovery then)
	RequiredScopes []string      // every token must carry all of them
	ResourceName   string        // resource_name in the metadata
	Leeway         time.Duration // clock skew allowed on exp and nbf
	// JWKSRefreshInterval bounds JWKS refetches for unknown keys (rotation).
	// Required (> 0: auth.jwks_refresh_interval).
	JWKSRefreshInterval time.Duration
	HTTPClient          *http.Client     // for discovery and JWKS (required)
	Now                 func() time.Time // clock (required: time.Now; tests move it)
	Logger              *slog.Logger     // required
	// Rejected counts refused requests by reason (required: the server's).
	Rejected *prometheus.CounterVec
}

// discoveryRetry bounds how often a failed discovery is retried.
const discoveryRetry = 5 * time.Second

// Authenticator validates access tokens for one issuer and audience. It
// does no I/O until the first token: discovery and the JWKS are fetched
// then (and refetched as described on keySet). Safe for concurrent use.
type Authenticator struct {
	opts        Options
	metadataURL string

	mu       sync.Mutex
	verifier *oidc.IDTokenVerifier
	keys     *keySet
	lastTry  time.Time
	lastErr  error
}

// missing names the options New needs that o lacks.
func (o *Options) missing() []string {
	var out []string
	for _, m := range []struct {
		name  string
		lacks bool
	}{
		{"HTTPClient", o.HTTPClient == nil}, {"Now", o.Now == nil}, {"JWKSRefreshInterval", o.JWKSRefreshInterval <= 0},
		{"Rejected", o.Rejected == nil}, {"Logger", o.Logger == nil},
	} {
		if m.lacks {
			out = append(out, m.name)
		}
	}
	return out
}

// New checks opts and returns an Authenticator; it fails when Issuer or
// Audience is missing or Audience is not an absolute http(s) URL (the
// metadata URL is derived from it, RFC 9728 §3.1), or when an option it
// needs is missing: it fills in no defaults of its own.
func New(opts Options) (*Authenticator, error) {
	if opts.Issuer == "" || opts.Audience == "" {
		return nil, errors.New("auth: issuer and audience are required")
	}
	mu, err := metadataURL(opts.Audience)
	if err != nil {
		return nil, err
	}
	if missing := opts.missing(); len(missing) > 0 {
		return nil, fmt.Errorf("auth: options lack %s (vmcp.New builds them from the config)", strings.Join(missing, ", "))
	}
	a := &Authenticator{opts: opts, metadataURL: mu}
	if opts.JWKSURL != "" {
		a.setKeys(opts.JWKSURL)
	}
	return a, nil
}

// setKeys builds the key set and verifier for jwksURL. Requires a.mu or
// exclusive access.
func (a *Authenticator) setKeys(jwksURL string) {
	a.keys = &keySet{url: jwksURL, client: a.opts.HTTPClient, interval: a.opts.JWKSRefreshInterval, now: a.opts.Now}
	a.verifier = oidc.NewVerifier(a.opts.Issuer, a.keys, &oidc.Config{
		ClientID:             a.opts.Audience,
		SupportedSigningAlgs: algorithms,
		Now:                  func() time.Time { return a.opts.Now().Add(-a.opts.Leeway) }, // exp leeway
	})
}

// ready returns the verifier, running discovery first if needed (at most
// once per discoveryRetry after a failure).
func (a *Authenticator) ready(ctx context.Context) (*oidc.IDTokenVerifier, *keySet, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.verifier != nil {
		return a.verifier, a.keys, nil
	}
	if !a.lastTry.IsZero() && a.opts.Now().Sub(a.lastTry) < discoveryRetry {
		return nil, nil, a.lastErr
	}
	a.lastTry = a.opts.Now()
	dctx, cancel := context.WithTimeout(oidc.ClientContext(context.WithoutCancel(ctx), a.opts.HTTPClient), fetchTimeout)
	defer cancel()
	p, err := oidc.NewProvider(dctx, a.opts.Issuer)
	var doc struct {
		JWKSURI string `json:"jwks_uri"`
	}
	if err == nil {
		err = p.Claims(&doc)
	}
	if err == nil && doc.JWKSURI == "" {
		err = errors.New("its metadata has no jwks_uri")
	}
	if err != nil {
		a.lastErr = fmt.Errorf("%w for %s: %w", errDiscovery, a.opts.Issuer, err)
		a.opts.Logger.Warn("auth: discovery failed; tokens cannot be validated until it succeeds", "issuer", a.opts.Issuer, "error", err)
		return nil, nil, a.lastErr
	}
	a.setKeys(doc.JWKSURI)
	return a.verifier, a.keys, nil
}

// Authenticate validates r's bearer token and returns its principal, or
// the failure to answer with (see Failure).
func (a *Authenticator) Authenticate(r *http.Request) (identity.Principal, *Failure) {
	if r.URL.Query().Has("access_token") {
		return identity.Principal{}, &Failure{Status: http.StatusBadRequest, Code: "invalid_request",
			Description: "access tokens in the query string are not accepted; send Authorization: Bearer"}
	}
	raw, f := bearer(r)
	if f != nil {
		return identity.Principal{}, f
	}
	if f := a.precheck(raw); f != nil {
		return identity.Principal{}, f
	}
	v, keys, err := a.ready(r.Context())
	if err != nil {
		return identity.Principal{}, unavailable(err)
	}
	tok, err := v.Verify(r.Context(), raw)
	if err != nil {
		if kerr := keys.unavailable(); kerr != nil {
			return identity.Principal{}, unavailable(kerr)
		}
		return identity.Principal{}, invalid("token rejected: " + err.Error())
	}
	p, f := a.principal(tok)
	if f != nil {
		return identity.Principal{}, f
	}
	if missing := missingScopes(p.Claims, a.opts.RequiredScopes); len(missing) > 0 {
		return identity.Principal{}, &Failure{Status: http.StatusForbidden, Code: "insufficient_scope",
			Description: "token lacks scope " + strings.Join(missing, " ")}
	}
	return p.WithToken(raw), nil // the subject token of outbound exchanges (pkg/outbound)
}

// principal checks what go-oidc leaves to the caller (nbf with our small
// leeway, a usable sub) and builds the principal.
func (a *Authenticator) principal(tok *oidc.IDToken) (identity.Principal, *Failure) {
	var claims map[string]any
	if err := tok.Claims(&claims); err != nil {
		return identity.Principal{}, invalid("token claims: " + err.Error())
	}
	if nbf, ok := claims["nbf"].(float64); ok {
		if time.Unix(int64(nbf), 0).After(a.opts.Now().Add(a.opts.Leeway)) {
			return identity.Principal{}, invalid("token is not valid yet (nbf)")
		}
	}
	if tok.Subject == "" || strings.ContainsRune(tok.Subject, 0) || strings.ContainsRune(tok.Issuer, 0) {
		return identity.Principal{}, invalid("token has no usable sub claim")
	}
	return identity.Principal{Issuer: tok.Issuer, Subject: tok.Subject, Claims: claims}, nil
}

// bearer extracts the one bearer token of r (RFC 6750 §2.1).
func bearer(r *http.Request) (string, *Failure) {
	vals := r.Header.Values("Authorization")
	if len(vals) == 0 {
		return "", &Failure{Status: http.StatusUnauthorized, Description: "no bearer token"}
	}
	if len(vals) > 1 {
		return "", &Failure{Status: http.StatusBadRequest, Code: "invalid_request", Description: "more than one Authorization header"}
	}
	scheme, tok, ok := strings.Cut(strings.TrimSpace(vals[0]), " ")
	tok = strings.TrimSpace(tok)
	if !ok || !strings.EqualFold(scheme, "Bearer") || tok == "" {
		return "", &Failure{Status: http.StatusUnauthorized, Description: "Authorization is not a Bearer token"}
	}
	return tok, nil
}

// missingScopes lists the required scopes claims do not grant: the scope
// claim (space-separated string, RFC 8693/9068) or scp (array, or string).
func missingScopes(claims map[string]any, required []string) []string {
	if len(required) == 0 {
		return nil
	}
	granted := map[string]bool{}
	add := func(v any) {
		switch v := v.(type) {
		case string:
			for _, s := range strings.Fields(v) {
				granted[s] = true
			}
		case []any:
			for _, s := range v {
				if s, ok := s.(string); ok {
					granted[s] = true
				}
			}
		}
	}
	add(claims["scope"])
	add(claims["scp"])
	var missing []string
	for _, s := range required {
		if !granted[s] {
			missing = append(missing, s)
		}
	}
	return missing
}

// Require wraps next (the MCP endpoint): every request, whatever its method
// or revision, needs a valid token; others get the failure's status and
// challenge. CORS preflights (OPTIONS, which never carry credentials) pass.
func (a *Authenticator) Require(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodOptions {
			next.ServeHTTP(w, r)
			return
		}
		p, f := a.Authenticate(r)
		if f != nil {
			a.writeFailure(w, f)
			return
		}
		next.ServeHTTP(w, r.WithContext(identity.With(r.Context(), p)))
	})
}

// writeJSON writes v as a JSON body with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
