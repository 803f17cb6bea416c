package vmcp

import (
	"net/http"

	"github.com/vmcp/vmcp/pkg/dispatch/modern"
	"github.com/vmcp/vmcp/pkg/edge"
	"github.com/vmcp/vmcp/pkg/status"
)

// modernVersion is the first protocol revision served statelessly.
const modernVersion = modern.FirstVersion

// routes builds the main listener's HTTP surface behind the edge (edge.go).
// The MCP endpoint picks the revision from the request: a POST whose
// MCP-Protocol-Version is 2026-07-28 or later is Modern; initialize,
// session requests, GET and DELETE are Legacy (2026-07-28 versioning: a
// dual-era server serves both on one endpoint). A POST routed to Legacy
// whose body is Modern (its _meta names 2026-07-28 or later) is refused
// with -32020, since its header is missing or unlike. Browser Origins are
// checked on the MCP endpoint and /status; CORS is answered on the MCP
// endpoint only. /metrics is here
// unless http.metrics_listen moves it to its own listener.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", s.readyz)
	if s.cfg.HTTP.MetricsListen == "" {
		mux.Handle("GET /metrics", s.metrics.Handler())
	}
	origins := edge.NewOrigins(s.cfg.HTTP.AllowedOrigins)
	mux.Handle("GET /status", origins.Guard(status.Handler(s.Status))) // operator page (pkg/status); no CORS
	mux.Handle(s.cfg.Path, origins.Handler(http.HandlerFunc(s.endpoint)))
	return s.edge(mux)
}

// metricsRoutes is the http.metrics_listen listener's surface: /metrics
// alone, behind the same Host guard and body bounds.
func (s *Server) metricsRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
	return s.edge(mux)
}

// edge puts h behind what every request meets first: the DNS-rebinding
// Host guard (http.allowed_hosts), then the body read whole within
// http.read_body_timeout and http.max_body_bytes.
func (s *Server) edge(h http.Handler) http.Handler {
	return edge.NewHostGuard(s.cfg.HTTP.AllowedHosts).Handler(edge.ReadBody(h, s.cfg.HTTP.ReadBodyTimeout.D(), s.cfg.HTTP.MaxBodyBytes))
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
