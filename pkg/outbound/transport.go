package outbound

import (
	"io"
	"net/http"

	"github.com/vmcp/vmcp/pkg/identity"
)

// Transport sends every request with `Authorization: Bearer` and the
// Source's token for the request's principal (Principal(req)); a 401
// answer drops that token, gets a fresh one and sends the request once
// more (when its body can be replayed). A request whose token cannot be
// had fails with the Source's *Error and is not sent.
type Transport struct {
	Base      http.RoundTripper
	Source    *Source
	Principal func(*http.Request) identity.Principal
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	pr := t.Principal(req)
	tok, err := t.Source.Token(req.Context(), pr)
	if err != nil {
		closeBody(req)
		return nil, err
	}
	resp, err := t.Base.RoundTrip(bearer(req, tok))
	if err != nil || resp.StatusCode != http.StatusUnauthorized || (req.Body != nil && req.GetBody == nil) {
		return resp, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	_ = resp.Body.Close()
	fresh, err := t.Source.Renew(req.Context(), pr, tok)
	if err != nil {
		return nil, err
	}
	again := bearer(req, fresh)
	if req.GetBody != nil {
		if again.Body, err = req.GetBody(); err != nil {
			return nil, err
		}
	}
	return t.Base.RoundTrip(again)
}

// bearer is a copy of req carrying tok.
func bearer(req *http.Request, tok string) *http.Request {
	r := req.Clone(req.Context())
	r.Header.Set("Authorization", "Bearer "+tok)
	return r
}

// closeBody closes a request body a RoundTripper does not send (it must).
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}
