package vmcp

import (
	"net/http"
	"time"

	"github.com/vmcp/vmcp/pkg/auth"
	"github.com/vmcp/vmcp/pkg/config"
)

// newAuthenticator builds inbound authentication from the auth section
// (nil without one: no authentication).
func (s *Server) newAuthenticator(a *config.Auth) error {
	if a == nil {
		return nil
	}
	au, err := auth.New(auth.Options{
		Issuer:              a.Issuer,
		Audience:            a.Audience,
		JWKSURL:             a.JWKSURL,
		RequiredScopes:      a.RequiredScopes,
		ResourceName:        a.ResourceName,
		Leeway:              a.Leeway.D(),
		JWKSRefreshInterval: a.JWKSRefreshInterval.D(),
		Logger:              s.log,
		Rejected:            s.metrics.AuthRejected,
		HTTPClient:          http.DefaultClient,
		Now:                 time.Now,
	})
	if err != nil {
		return err
	}
	s.auth = au
	return nil
}

// authenticated wraps the MCP endpoint: with auth configured, every
// request (both revisions; POST, GET and DELETE) needs a valid bearer
// token and carries its principal on the context (auth.Authenticator).
func (s *Server) authenticated(next http.Handler) http.Handler {
	if s.auth == nil {
		return next
	}
	return s.auth.Require(next)
}

// metadataRoutes serves the RFC 9728 protected resource metadata, with
// auth configured: at /.well-known/oauth-protected-resource and its
// path-suffixed form for the MCP path.
func (s *Server) metadataRoutes(mux *http.ServeMux) {
	if s.auth == nil {
		return
	}
	h := s.auth.MetadataHandler()
	for _, p := range s.auth.MetadataPaths(s.cfg.Path) {
		mux.Handle(p, h)
	}
}
