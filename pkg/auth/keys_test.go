package auth_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/golang-jwt/jwt/v5"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth"
)

// EC and EdDSA keys from the JWKS verify tokens; a symmetric key an
// issuer publishes by mistake is ignored, so HS256 with it fails.
func TestJWKSWithECEdDSAAndSymmetricKeys(t *testing.T) {
	ec, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	require.NoError(t, err)
	edPub, ed, err := ed25519.GenerateKey(rand.Reader)
	require.NoError(t, err)
	secret := []byte("0123456789abcdef0123456789abcdef")
	set := jose.JSONWebKeySet{Keys: []jose.JSONWebKey{
		{Key: &ec.PublicKey, KeyID: "ec", Algorithm: "ES256", Use: "sig"},
		{Key: edPub, KeyID: "ed", Algorithm: "EdDSA", Use: "sig"},
		{Key: secret, KeyID: "hs", Algorithm: "HS256", Use: "sig"},
	}}
	jwks := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _ = json.NewEncoder(w).Encode(set) }))
	t.Cleanup(jwks.Close)
	const iss = "https://idp.example.com"
	a, err := auth.New(complete(auth.Options{Issuer: iss, Audience: audience, JWKSURL: jwks.URL, Leeway: time.Second}))
	require.NoError(t, err)

	sign := func(m jwt.SigningMethod, kid string, key any) string {
		tok := jwt.NewWithClaims(m, jwt.MapClaims{"iss": iss, "aud": audience, "sub": "alice", "exp": time.Now().Add(time.Minute).Unix()})
		tok.Header["kid"] = kid
		s, err := tok.SignedString(key)
		require.NoError(t, err)
		return s
	}
	w, p := serve(a, sign(jwt.SigningMethodES256, "ec", ec), "")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	require.Equal(t, "alice", p.Subject)
	w, _ = serve(a, sign(jwt.SigningMethodEdDSA, "ed", ed), "")
	require.Equal(t, http.StatusOK, w.Code, w.Body.String())
	w, _ = serve(a, sign(jwt.SigningMethodHS256, "hs", secret), "")
	require.Equal(t, http.StatusUnauthorized, w.Code, "HMAC is never accepted")
}
