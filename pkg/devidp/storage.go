package devidp

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/subtle"
	"errors"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// storage is the provider's in-memory op.Storage: fixed clients, one
// RSA key, no users, sessions or refresh tokens. Its maps are written
// before the server starts and only read afterwards.
type storage struct {
	key     *rsa.PrivateKey
	kid     string
	clients map[string]Client
	cfg     Config
}

var errNoBrowserFlow = errors.New("devidp: no authorization code flow (use client_credentials)")

func randomID() string { return rand.Text() }

// client is the op view of a registered client.
func (s *storage) client(id string) (op.Client, error) {
	c, ok := s.clients[id]
	if !ok {
		return nil, errors.New("devidp: unknown client")
	}
	grants := c.Grants
	if len(grants) == 0 {
		grants = []oidc.GrantType{oidc.GrantTypeClientCredentials}
	}
	return &opClient{id: c.ID, grants: grants}, nil
}

// authorize checks a client's secret in constant time.
func (s *storage) authorize(id, secret string) error {
	c, ok := s.clients[id]
	if !ok || subtle.ConstantTimeCompare([]byte(c.Secret), []byte(secret)) != 1 {
		return errors.New("devidp: unknown client or wrong secret")
	}
	return nil
}

// GetClientByClientID implements op.OPStorage.
func (s *storage) GetClientByClientID(_ context.Context, id string) (op.Client, error) {
	return s.client(id)
}

// AuthorizeClientIDSecret implements op.OPStorage.
func (s *storage) AuthorizeClientIDSecret(_ context.Context, id, secret string) error {
	return s.authorize(id, secret)
}

// SigningKey implements op.AuthStorage: the RS256 key.
func (s *storage) SigningKey(context.Context) (op.SigningKey, error) {
	return &signingKey{kid: s.kid, key: s.key}, nil
}

// SignatureAlgorithms implements op.AuthStorage.
func (s *storage) SignatureAlgorithms(context.Context) ([]jose.SignatureAlgorithm, error) {
	return []jose.SignatureAlgorithm{jose.RS256}, nil
}

// KeySet implements op.AuthStorage: the public key, published in the JWKS.
func (s *storage) KeySet(context.Context) ([]op.Key, error) {
	return []op.Key{&publicKey{kid: s.kid, key: &s.key.PublicKey}}, nil
}

// Health implements op.Storage.
func (s *storage) Health(context.Context) error { return nil }

// SetUserinfoFromToken implements op.OPStorage: the userinfo of an access
// token is its subject.
func (s *storage) SetUserinfoFromToken(_ context.Context, u *oidc.UserInfo, _, subject, _ string) error {
	u.Subject = subject
	return nil
}

// SetIntrospectionFromToken implements op.OPStorage.
func (s *storage) SetIntrospectionFromToken(_ context.Context, r *oidc.IntrospectionResponse, _, subject, clientID string) error {
	r.Subject, r.ClientID = subject, clientID
	return nil
}

// SetUserinfoFromScopes implements op.OPStorage (deprecated there; empty).
func (s *storage) SetUserinfoFromScopes(context.Context, *oidc.UserInfo, string, string, []string) error {
	return nil
}

// GetPrivateClaimsFromScopes implements op.OPStorage.
func (s *storage) GetPrivateClaimsFromScopes(_ context.Context, _, _ string, scopes []string) (map[string]any, error) {
	return scopeClaim(scopes), nil
}

// GetKeyByIDAndClientID implements op.OPStorage: no JWT profile clients.
func (s *storage) GetKeyByIDAndClientID(context.Context, string, string) (*jose.JSONWebKey, error) {
	return nil, errors.New("devidp: no JWT profile grant")
}

// ValidateJWTProfileScopes implements op.OPStorage: no JWT profile grant.
func (s *storage) ValidateJWTProfileScopes(context.Context, string, []string) ([]string, error) {
	return nil, errors.New("devidp: no JWT profile grant")
}

// CreateAuthRequest implements op.AuthStorage: no browser flow.
func (s *storage) CreateAuthRequest(context.Context, *oidc.AuthRequest, string) (op.AuthRequest, error) {
	return nil, oidc.ErrRequestNotSupported().WithParent(errNoBrowserFlow)
}

// AuthRequestByID implements op.AuthStorage: no browser flow.
func (s *storage) AuthRequestByID(context.Context, string) (op.AuthRequest, error) {
	return nil, errNoBrowserFlow
}

// AuthRequestByCode implements op.AuthStorage: no browser flow.
func (s *storage) AuthRequestByCode(context.Context, string) (op.AuthRequest, error) {
	return nil, errNoBrowserFlow
}

// SaveAuthCode implements op.AuthStorage: no browser flow.
func (s *storage) SaveAuthCode(context.Context, string, string) error { return errNoBrowserFlow }

// DeleteAuthRequest implements op.AuthStorage: no browser flow.
func (s *storage) DeleteAuthRequest(context.Context, string) error { return errNoBrowserFlow }

// CreateAccessAndRefreshTokens implements op.AuthStorage: no refresh tokens.
func (s *storage) CreateAccessAndRefreshTokens(context.Context, op.TokenRequest, string) (string, string, time.Time, error) {
	return "", "", time.Time{}, oidc.ErrUnsupportedGrantType().WithDescription("no refresh tokens")
}

// TokenRequestByRefreshToken implements op.AuthStorage: no refresh tokens.
func (s *storage) TokenRequestByRefreshToken(context.Context, string) (op.RefreshTokenRequest, error) {
	return nil, op.ErrInvalidRefreshToken
}

// GetRefreshTokenInfo implements op.AuthStorage: no refresh tokens.
func (s *storage) GetRefreshTokenInfo(context.Context, string, string) (string, string, error) {
	return "", "", op.ErrInvalidRefreshToken
}

// TerminateSession implements op.AuthStorage: there are no sessions.
func (s *storage) TerminateSession(context.Context, string, string) error { return nil }

// RevokeToken implements op.AuthStorage: JWTs live until exp.
func (s *storage) RevokeToken(context.Context, string, string, string) *oidc.Error {
	return &oidc.Error{ErrorType: "unsupported_token_type", Description: "tokens live until they expire"}
}
