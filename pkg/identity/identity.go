// Package identity names who a client request speaks for: the principal
// (MCP authorization: the subject of a validated access token, keyed by
// its issuer and subject). The HTTP edge attaches it to the request's
// context once; dispatchers read it there and pass it explicitly to the
// call core and to everything below it.
package identity

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
)

// Principal is an authenticated client: the (iss, sub) pair of its access
// token plus the token's claims (for authorization policies). The zero
// Principal is anonymous: vmcp runs without inbound authentication.
type Principal struct {
	Issuer  string         // the token's iss claim
	Subject string         // the token's sub claim
	Claims  map[string]any // every claim of the token; nil when anonymous
	// token is the validated access token itself (WithToken): the subject
	// token of an outbound exchange, never sent to a backend or logged.
	token string
}

// WithToken returns p carrying tok, the access token p was validated from
// (pkg/auth); only an outbound token exchange reads it (Token).
func (p Principal) WithToken(tok string) Principal {
	p.token = tok
	return p
}

// Token is the access token p was validated from ("" when none): the
// subject token of an RFC 8693 exchange. It must never be logged or sent
// to a backend (MCP authorization forbids token passthrough).
func (p Principal) Token() string { return p.token }

// GoString is p for %#v without its token.
func (p Principal) GoString() string {
	return "identity.Principal{" + p.String() + "}"
}

// Anonymous reports whether p is the zero principal (no authentication).
func (p Principal) Anonymous() bool { return p.Issuer == "" && p.Subject == "" }

// Key identifies p uniquely and compactly: "" for anonymous, else issuer
// and subject joined by a NUL byte (neither claim may contain one).
func (p Principal) Key() string {
	if p.Anonymous() {
		return ""
	}
	return p.Issuer + "\x00" + p.Subject
}

// String is p for logs: "anonymous" or "sub@iss".
func (p Principal) String() string {
	if p.Anonymous() {
		return "anonymous"
	}
	return p.Subject + "@" + p.Issuer
}

type ctxKey struct{}

// With returns ctx carrying p; the HTTP edge calls it once per request.
func With(ctx context.Context, p Principal) context.Context {
	return context.WithValue(ctx, ctxKey{}, p)
}

// From returns the principal ctx carries (the zero Principal if none).
func From(ctx context.Context) Principal {
	p, _ := ctx.Value(ctxKey{}).(Principal)
	return p
}

// Tag is a short fingerprint of p's Key: the first 8 bytes of its SHA-256
// as 16 hex digits, "" for anonymous. Tokens vmcp seals for p (list
// cursors, requestState) carry it, so one presented by another principal
// is refused without the token naming who p is.
func (p Principal) Tag() string {
	if p.Anonymous() {
		return ""
	}
	sum := sha256.Sum256([]byte(p.Key()))
	return hex.EncodeToString(sum[:8])
}
