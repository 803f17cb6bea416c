package vmcp

import (
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// modernVersion is the first protocol revision served statelessly.
const modernVersion = "2026-07-28"

// routes builds the HTTP surface. The MCP endpoint picks the revision from
// the request: a POST whose MCP-Protocol-Version is 2026-07-28 or later is
// Modern; initialize, session requests, GET and DELETE are Legacy
// (2026-07-28 versioning: a dual-era server serves both on one endpoint).
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", s.readyz)
	cop := http.NewCrossOriginProtection()
	for _, o := range s.cfg.HTTP.AllowedOrigins {
		_ = cop.AddTrustedOrigin(o) // validated by config
	}
	cop.SetDenyHandler(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, "Forbidden: cross-origin request rejected (Origin not allowed)", http.StatusForbidden)
	}))
	mux.Handle(s.cfg.Path, cop.Handler(http.HandlerFunc(s.endpoint)))
	return mux
}

func (s *Server) endpoint(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Protocol-Version") >= modernVersion {
		s.modern(w, r)
		return
	}
	s.legacy.ServeHTTP(w, r)
}

// modern is replaced by the Modern dispatcher; until then a Modern request
// gets the spec's unsupported-version answer (-32022 with the supported list).
func (s *Server) modern(w http.ResponseWriter, r *http.Request) {
	_ = mcp.SupportedProtocolVersions
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadRequest)
	_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32022,"message":"unsupported protocol version","data":{"supported":["2025-11-25","2025-06-18","2025-03-26"]}}}`))
}
