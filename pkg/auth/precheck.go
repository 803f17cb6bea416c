package auth

import (
	"encoding/json"
	"slices"
	"time"

	"github.com/go-jose/go-jose/v4"
)

// precheck refuses, before the issuer is contacted, a token that no key
// could make valid: not a compact JWS with one signature of an allowed
// algorithm, or claims (read unverified) with another iss, without the
// audience, or expired. Such a token is 401 even while the issuer is
// unreachable; go-oidc still verifies everything of a token that passes.
func (a *Authenticator) precheck(raw string) *Failure {
	jws, err := jose.ParseSignedCompact(raw, allowedAlgs)
	if err != nil || len(jws.Signatures) != 1 {
		return invalid("token rejected: not a JWS signed with an allowed algorithm")
	}
	var c struct {
		Iss string          `json:"iss"`
		Aud json.RawMessage `json:"aud"`
		Exp *float64        `json:"exp"`
	}
	if json.Unmarshal(jws.UnsafePayloadWithoutVerification(), &c) != nil {
		return invalid("token rejected: its claims are not a JSON object")
	}
	if c.Iss != a.opts.Issuer {
		return invalid("token rejected: issued by another issuer")
	}
	if !audienceHas(c.Aud, a.opts.Audience) {
		return invalid("token rejected: audience is not " + a.opts.Audience)
	}
	if c.Exp != nil && time.Unix(int64(*c.Exp), 0).Before(a.opts.Now().Add(-a.opts.Leeway)) {
		return invalid("token rejected: expired")
	}
	return nil
}

// audienceHas reports whether the aud claim (a string or an array of
// strings, RFC 7519 §4.1.3) contains want.
func audienceHas(aud json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(aud, &one) == nil {
		return one == want
	}
	var many []string
	return json.Unmarshal(aud, &many) == nil && slices.Contains(many, want)
}
