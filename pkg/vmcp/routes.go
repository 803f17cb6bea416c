package vmcp

import (
	"net/http"
	"net/url"
	"slices"

	"github.com/vmcp/vmcp/pkg/dispatch/modern"
	"github.com/vmcp/vmcp/pkg/status"
)

// modernVersion is the first protocol revision served statelessly.
const modernVersion = modern.FirstVersion

// routes builds the HTTP surface. The MCP endpoint picks the revision from
// the request: a POST whose MCP-Protocol-Version is 2026-07-28 or later is
// Modern; initialize, session requests, GET and DELETE are Legacy
// (2026-07-28 versioning: a dual-era server serves both on one endpoint).
// A POST routed to Legacy whose body is Modern (its _meta names 2026-07-28
// or later) is refused with -32020, since its header is missing or unlike.
// With auth configured every endpoint request needs a bearer token, and
// the protected resource metadata is served (auth.go).
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", s.readyz)
	mux.Handle("GET /metrics", s.metrics.Handler())
	mux.Handle("GET /status", s.checkOrigin(status.Handler(s.Status))) // operator page (pkg/status)
	cop := http.NewCrossOriginProtection()
	for _, o := range s.cfg.HTTP.AllowedOrigins {
		_ = cop.AddTrustedOrigin(o) // validated by config
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "Forbidden: cross-origin request rejected (Origin not allowed)", http.StatusForbidden)
	}))
	s.metadataRoutes(mux)                                                                                         // auth.go
	mux.Handle(s.cfg.Path, s.observed(s.checkOrigin(cop.Handler(s.authenticated(http.HandlerFunc(s.endpoint)))))) // telemetry.go
	return mux
}

func (s *Server) endpoint(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost {
		if r.Header.Get("Mcp-Protocol-Version") >= modernVersion {
			s.modern.ServeHTTP(w, r)
			return
		}
		if s.modern.InterceptModernBody(w, r) { // a Modern body without its header: 400 + -32020
			return
		}
	}
	s.serveLegacy(w, r) // here, or forwarded to the session's owner node (cluster.go)
}

// checkOrigin refuses (403) any request, GET included, whose Origin header
// is neither this host nor in http.allowed_origins (Streamable HTTP: servers
// MUST validate Origin, against DNS rebinding). Requests without Origin
// (non-browser clients) pass.
func (s *Server) checkOrigin(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		origin := r.Header.Get("Origin")
		if origin == "" {
			next.ServeHTTP(w, r)
			return
		}
		if u, err := url.Parse(origin); err == nil && u.Host == r.Host || slices.Contains(s.cfg.HTTP.AllowedOrigins, origin) {
			next.ServeHTTP(w, r)
			return
		}
		http.Error(w, "Forbidden: Origin "+origin+" is not allowed", http.StatusForbidden)
	})
}
