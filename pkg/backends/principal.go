package backends

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
)

// Principal names who a client request speaks for, as far as b can tell:
// a digest of the client headers b forwards (forward_headers) and, on a
// per-principal backend (token_exchange), of the client's Authorization
// (the validated token its own token is exchanged from; never sent), ""
// when there is none. Backend sessions shared between Modern requests are
// only shared between requests with equal principals.
func (b *Backend) Principal(h http.Header) string {
	names := b.cfg.ForwardHeaders
	if b.perPrincipal {
		names = append(slices.Clone(names), "Authorization")
	}
	if len(names) == 0 {
		return ""
	}
	d := sha256.New()
	for _, name := range names {
		d.Write([]byte(http.CanonicalHeaderKey(name)))
		for _, v := range h.Values(name) {
			d.Write([]byte{0})
			d.Write([]byte(v))
		}
		d.Write([]byte{1})
	}
	return hex.EncodeToString(d.Sum(nil)[:16])
}
