package backends

import (
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/outbound"
)

// Outbound identity: a backend with `auth` gets a token of its own on
// every HTTP request (pkg/outbound's Transport in its pooled client, so
// the go-sdk sessions' requests and the raw posts alike). A
// token_exchange backend's token is that of the request's principal: the
// one its backend session is bound to (session.Set.Bind; the session's
// initialize, notifications, GET stream, DELETE and re-initialize carry
// no client request), else the one on the request's context (the HTTP
// edge's identity.With). client_credentials is vmcp's own token.

// WithIssuer sets the top-level auth.issuer, whose discovery document
// gives a backend's token endpoint when its auth.token_url is "".
func WithIssuer(issuer string) Option { return func(o *managerOptions) { o.issuer = issuer } }

// newOutbound is the token source of cfg's auth (nil: none).
func newOutbound(cfg config.Backend, o managerOptions) *outbound.Source {
	if cfg.Auth == nil || cfg.Transport == config.TransportStdio || cfg.URL == "" {
		return nil
	}
	return outbound.New(outbound.Options{Backend: cfg.Name, Auth: *cfg.Auth, Issuer: o.issuer, Counter: o.metrics.OutboundTokens})
}

// OutboundStats are b's outbound token counts (nil: no auth), for /status.
func (b *Backend) OutboundStats() *outbound.Stats {
	if b.out == nil {
		return nil
	}
	s := b.out.Stats()
	return &s
}
