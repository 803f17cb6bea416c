package backends

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
)

// Principal names who a client request speaks for, as far as b can tell:
// a digest of the client headers b forwards (forward_headers, for example
// Authorization), "" when it forwards none. Backend sessions shared between
// Modern requests are only shared between requests with equal principals.
func (b *Backend) Principal(h http.Header) string {
	if len(b.cfg.ForwardHeaders) == 0 {
		return ""
	}
	d := sha256.New()
	for _, name := range b.cfg.ForwardHeaders {
		d.Write([]byte(http.CanonicalHeaderKey(name)))
		for _, v := range h.Values(name) {
			d.Write([]byte{0})
			d.Write([]byte(v))
		}
		d.Write([]byte{1})
	}
	return hex.EncodeToString(d.Sum(nil)[:16])
}
