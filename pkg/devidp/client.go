package devidp

import (
	"crypto/rsa"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/pkg/oidc"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// opClient is a registered client as op sees it: confidential (HTTP Basic
// or form post), JWT access tokens, no redirects, any scope.
type opClient struct {
	id     string
	grants []oidc.GrantType
}

func (c *opClient) GetID() string                        { return c.id }
func (c *opClient) RedirectURIs() []string               { return nil }
func (c *opClient) PostLogoutRedirectURIs() []string     { return nil }
func (c *opClient) ApplicationType() op.ApplicationType  { return op.ApplicationTypeWeb }
func (c *opClient) AuthMethod() oidc.AuthMethod          { return oidc.AuthMethodBasic }
func (c *opClient) ResponseTypes() []oidc.ResponseType   { return nil }
func (c *opClient) GrantTypes() []oidc.GrantType         { return c.grants }
func (c *opClient) LoginURL(string) string               { return "" }
func (c *opClient) AccessTokenType() op.AccessTokenType  { return op.AccessTokenTypeJWT }
func (c *opClient) IDTokenLifetime() time.Duration       { return time.Hour }
func (c *opClient) DevMode() bool                        { return true }
func (c *opClient) IsScopeAllowed(string) bool           { return true }
func (c *opClient) IDTokenUserinfoClaimsAssertion() bool { return false }
func (c *opClient) ClockSkew() time.Duration             { return 0 }

func (c *opClient) RestrictAdditionalIdTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

func (c *opClient) RestrictAdditionalAccessTokenScopes() func([]string) []string {
	return func(s []string) []string { return s }
}

// signingKey is the provider's RS256 private key.
type signingKey struct {
	kid string
	key *rsa.PrivateKey
}

func (k *signingKey) SignatureAlgorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *signingKey) Key() any                                    { return k.key }
func (k *signingKey) ID() string                                  { return k.kid }

// publicKey is its public half, as published in the JWKS.
type publicKey struct {
	kid string
	key *rsa.PublicKey
}

func (k *publicKey) ID() string                         { return k.kid }
func (k *publicKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k *publicKey) Use() string                        { return "sig" }
func (k *publicKey) Key() any                           { return k.key }
