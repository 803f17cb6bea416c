package vmcp

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmcp/vmcp/pkg/auth"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/telemetry"
)

// SessionForbidden counts Legacy session requests refused (403) because
// another principal created the session, by HTTP method.
var SessionForbidden = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "vmcp_session_principal_mismatch_total",
	Help: "Legacy session requests refused because another principal created the session, by method.",
}, []string{"method"})

func init() { telemetry.Registry.MustRegister(SessionForbidden) }

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
