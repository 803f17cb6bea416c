package devidp

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// maxForm bounds a token request's body (bytes).
const maxForm = 64 << 10

type audienceKey struct{}

// audienceParam reads the token request's form (bounded): without an
// `audience` parameter, its RFC 8707 `resource` values become the audience
// (so token exchange honours either); the result is put on the context for
// the client_credentials grant, whose request type has no audience.
func audienceParam(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || !strings.HasSuffix(r.URL.Path, "/oauth/token") {
			next.ServeHTTP(w, r)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxForm)
		if err := r.ParseForm(); err != nil {
			http.Error(w, `{"error":"invalid_request","error_description":"unreadable form"}`, http.StatusBadRequest)
			return
		}
		if len(r.Form["audience"]) == 0 && len(r.Form["resource"]) > 0 {
			r.Form["audience"] = r.Form["resource"]
		}
		ctx := context.WithValue(r.Context(), audienceKey{}, r.Form["audience"])
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// tokenRequest is a client_credentials grant: the client is the subject.
type tokenRequest struct {
	subject  string
	audience []string
	scopes   []string
}

func (t *tokenRequest) GetSubject() string    { return t.subject }
func (t *tokenRequest) GetAudience() []string { return t.audience }
func (t *tokenRequest) GetScopes() []string   { return t.scopes }

// ClientCredentials authenticates a client_credentials client.
func (s *storage) ClientCredentials(_ context.Context, clientID, secret string) (op.Client, error) {
	if err := s.authorize(clientID, secret); err != nil {
		return nil, err
	}
	return s.client(clientID)
}

// ClientCredentialsTokenRequest is the grant for clientID: sub is the
// client ID, aud the requested audience or the configured one.
func (s *storage) ClientCredentialsTokenRequest(ctx context.Context, clientID string, scopes []string) (op.TokenRequest, error) {
	aud, _ := ctx.Value(audienceKey{}).([]string)
	if len(aud) == 0 && s.cfg.Audience != "" {
		aud = []string{s.cfg.Audience}
	}
	g := Grant{Type: oidc.GrantTypeClientCredentials, ClientID: clientID, Subject: clientID, Audience: aud, Scopes: scopes}
	if err := s.allow(g); err != nil {
		return nil, err
	}
	return &tokenRequest{subject: clientID, audience: aud, scopes: scopes}, nil
}

// ValidateTokenExchangeRequest admits an exchange by a client registered
// for it, of an access token this provider issued, for an access token
// with a named audience; the new token keeps the subject token's sub.
func (s *storage) ValidateTokenExchangeRequest(_ context.Context, r op.TokenExchangeRequest) error {
	c, ok := s.clients[r.GetClientID()]
	if !ok || !slices.Contains(c.Grants, oidc.GrantTypeTokenExchange) {
		return oidc.ErrUnauthorizedClient().WithDescription("client may not exchange tokens")
	}
	if r.GetExchangeSubjectTokenType() != oidc.AccessTokenType {
		return oidc.ErrInvalidRequest().WithDescription("subject_token_type must be access_token")
	}
	switch r.GetRequestedTokenType() {
	case "":
		r.SetRequestedTokenType(oidc.AccessTokenType)
	case oidc.AccessTokenType:
	default:
		return oidc.ErrInvalidRequest().WithDescription("only access tokens are issued")
	}
	if len(r.GetAudience()) == 0 {
		return oidc.ErrInvalidTarget().WithDescription("audience or resource required")
	}
	return s.allow(Grant{Type: oidc.GrantTypeTokenExchange, ClientID: r.GetClientID(),
		Subject: r.GetSubject(), Audience: r.GetAudience(), Scopes: r.GetScopes()})
}

// CreateTokenExchangeRequest keeps nothing: exchanges are not audited.
func (s *storage) CreateTokenExchangeRequest(context.Context, op.TokenExchangeRequest) error {
	return nil
}

// GetPrivateClaimsFromTokenExchangeRequest puts the granted scopes in the
// exchanged token's scope claim.
func (s *storage) GetPrivateClaimsFromTokenExchangeRequest(_ context.Context, r op.TokenExchangeRequest) (map[string]any, error) {
	return scopeClaim(r.GetScopes()), nil
}

// SetUserinfoFromTokenExchangeRequest sets the sub of an exchanged ID token.
func (s *storage) SetUserinfoFromTokenExchangeRequest(_ context.Context, u *oidc.UserInfo, r op.TokenExchangeRequest) error {
	u.Subject = r.GetSubject()
	return nil
}

// GetPrivateClaimsFromRequest puts the granted scopes in an access
// token's scope claim (space-separated, RFC 9068).
func (s *storage) GetPrivateClaimsFromRequest(_ context.Context, _ op.TokenRequest, scopes []string) (map[string]any, error) {
	return scopeClaim(scopes), nil
}

func scopeClaim(scopes []string) map[string]any {
	if len(scopes) == 0 {
		return nil
	}
	return map[string]any{"scope": strings.Join(scopes, " ")}
}

// CreateAccessToken names a new access token (the JWT is self-contained;
// nothing is stored) and sets its expiry.
func (s *storage) CreateAccessToken(context.Context, op.TokenRequest) (string, time.Time, error) {
	return randomID(), time.Now().Add(s.cfg.TokenLifetime), nil
}

// allow applies the configured policy.
func (s *storage) allow(g Grant) error {
	if s.cfg.Policy == nil {
		return nil
	}
	err := s.cfg.Policy(g)
	var oe *oidc.Error
	if err == nil || errors.As(err, &oe) {
		return err
	}
	return oidc.ErrInvalidGrant().WithDescription("%s", err.Error())
}
