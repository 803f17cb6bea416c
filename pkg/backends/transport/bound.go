package transport

import (
	"context"
	"net/http"

	"github.com/vmcp/vmcp/pkg/identity"
)

// bindKey carries a backend session's principal (a func reading the
// session.Set's latest) in a context.
type bindKey struct{}

// WithBinding returns ctx carrying f, the principal of the backend session
// its requests belong to (read at each request; BindingOf).
func WithBinding(ctx context.Context, f func() identity.Principal) context.Context {
	return context.WithValue(ctx, bindKey{}, f)
}

// BindingOf is ctx's binding (WithBinding), nil for none.
func BindingOf(ctx context.Context) func() identity.Principal {
	f, _ := ctx.Value(bindKey{}).(func() identity.Principal)
	return f
}

// requestPrincipal is whose token req carries: its session's principal,
// else its context's.
func requestPrincipal(req *http.Request) identity.Principal {
	if f := BindingOf(req.Context()); f != nil {
		if p := f(); !p.Anonymous() {
			return p
		}
	}
	return identity.From(req.Context())
}

// BoundHTTP wraps hc so every request carries the binding f (its
// session's principal) unless its context has one.
func BoundHTTP(hc *http.Client, f func() identity.Principal) *http.Client {
	return &http.Client{Transport: &boundTransport{base: hc.Transport, f: f}}
}

type boundTransport struct {
	base http.RoundTripper
	f    func() identity.Principal
}

func (t *boundTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if BindingOf(req.Context()) == nil {
		req = req.WithContext(WithBinding(req.Context(), t.f))
	}
	return t.base.RoundTrip(req)
}

// HeldHTTP wraps hc so a request whose context carries no client header
// gets held()'s (the client session's latest, session.Set.Forward), read
// when it is sent (so each reopening of a GET stream reads it anew).
func HeldHTTP(hc *http.Client, held func() http.Header) *http.Client {
	return &http.Client{Transport: &heldTransport{base: hc.Transport, held: held}}
}

type heldTransport struct {
	base http.RoundTripper
	held func() http.Header
}

// heldKey carries a heldTransport's held func in a request's context; the
// backend's headerTransport calls it when the context has no client header.
type heldKey struct{}

func (t *heldTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if _, ok := req.Context().Value(clientHeaderKey{}).(http.Header); !ok {
		req = req.WithContext(context.WithValue(req.Context(), heldKey{}, t.held))
	}
	return t.base.RoundTrip(req)
}
