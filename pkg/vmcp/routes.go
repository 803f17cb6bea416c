package vmcp

import (
	"encoding/json"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/edge"
	"github.com/vmcp/vmcp/pkg/metatools"
	"github.com/vmcp/vmcp/pkg/status"
	"github.com/vmcp/vmcp/pkg/wire"
)

// protocolVersions are the MCP-Protocol-Version values the endpoint
// serves, both revisions (the go-sdk's).
var protocolVersions = mcp.SupportedProtocolVersions()

// routes builds the main listener's HTTP surface behind the edge
// (pkg/edge): the Host guard; on the MCP endpoint the Origin check and
// CORS; the body bounds. The MCP endpoint picks the revision from the
// request: a POST whose MCP-Protocol-Version is 2026-07-28 or later is
// Modern; initialize, session requests, GET and DELETE are Legacy
// (2026-07-28 versioning: a dual-era server serves both on one endpoint).
// A POST routed to Legacy whose body is Modern (its _meta names 2026-07-28
// or later) is refused with -32020, since its header is missing or unlike.
// /status checks Origins too, without CORS. /metrics is here unless
// http.metrics_listen moves it to its own listener. With auth configured
// every endpoint request needs a bearer token (after CORS, so a 401 carries
// it and a preflight needs none), and the protected resource metadata is
// served (auth.go).
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok\n")) })
	mux.HandleFunc("GET /readyz", s.readyz)
	if s.cfg.HTTP.MetricsListen == "" {
		mux.Handle("GET /metrics", s.metrics.Handler())
	}
	origins := edge.NewOrigins(s.cfg.HTTP.AllowedOrigins)
	mux.Handle("GET /status", origins.Guard(status.Handler(s.Status)))                  // operator page (pkg/status); no CORS
	mux.Handle("POST "+AdminAcceptPath, origins.Guard(http.HandlerFunc(s.adminAccept))) // pins.go; security.admin_token
	mux.Handle(s.cfg.Path, s.observed(s.authenticated(http.HandlerFunc(s.endpoint))))   // spans and request metrics: telemetry.go
	s.metadataRoutes(mux)                                                               // auth.go; public, with its own CORS
	bounded := s.bodies(passed(stageBody, mux))                                         // the passed marks: refusals before them are audited (audit_edge.go)
	withCORS := origins.Handler(passed(stageOrigin, bounded))                           // CORS headers on every answer, 401, 408 and 413 included
	return s.auditEdge(s.hosts(passed(stageHost, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pattern := mux.Handler(r); pattern == s.cfg.Path { // the mux's own choice
			withCORS.ServeHTTP(w, r)
			return
		}
		bounded.ServeHTTP(w, r)
	}))))
}

// metricsRoutes is the http.metrics_listen listener's surface: /metrics
// alone, behind the same Host guard and body bounds.
func (s *Server) metricsRoutes() http.Handler {
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", s.metrics.Handler())
	return s.hosts(s.bodies(mux))
}

// hosts is the DNS-rebinding Host guard (http.allowed_hosts), what every
// request meets first.
func (s *Server) hosts(h http.Handler) http.Handler {
	return edge.NewHostGuard(s.cfg.HTTP.AllowedHosts).Handler(h)
}

// bodies reads every request body whole within http.read_body_timeout and
// http.max_body_bytes before h runs.
func (s *Server) bodies(h http.Handler) http.Handler {
	return edge.ReadBody(h, s.cfg.HTTP.ReadBodyTimeout.D(), s.cfg.HTTP.MaxBodyBytes)
}

// endpoint answers what neither dispatcher may decide first (a malformed
// or unknown MCP-Protocol-Version: 400 naming it; on Legacy the refusals
// of legacy.Refuse), then routes the request to its revision. Every SSE
// answer carries Cache-Control: no-cache and X-Accel-Buffering: no; every
// error is a JSON-RPC body, the go-sdk handler's plain-text ones too.
func (s *Server) endpoint(w http.ResponseWriter, r *http.Request) {
	s.admit(r)                    // past authentication: the audit log's principal (audit.go)
	w = wire.SSEWriter(w)         // every SSE response, the go-sdk handler's too: X-Accel-Buffering: no
	w, done := wire.JSONErrors(w) // plain-text refusals (the go-sdk handler's) as JSON-RPC bodies
	defer done()
	if jerr := wire.CheckVersion(r.Header.Get("Mcp-Protocol-Version"), protocolVersions); jerr != nil {
		wire.WriteError(w, http.StatusBadRequest, requestID(r), jerr)
		return
	}
	if r.Method == http.MethodPost {
		if s.tools != nil {
			metatools.Rewrite(r) // call_tool → the named tool's own tools/call, on either revision
		}
		if wire.IsModern(r.Header.Get("Mcp-Protocol-Version")) {
			s.modern.ServeHTTP(w, r)
			return
		}
		if s.modern.InterceptModernBody(w, r) { // a Modern body without its header: 400 + -32020
			return
		}
	}
	s.serveLegacy(w, r) // here, or forwarded to the session's owner node (cluster.go)
}

// requestID is the id of the JSON-RPC request in r's body (read whole by
// the edge), nil if there is none.
func requestID(r *http.Request) json.RawMessage {
	bb, ok := r.Body.(*wire.BufferedBody)
	if !ok {
		return nil
	}
	return bodyID(bb.Bytes())
}

// bodyID is the id of the JSON-RPC request body holds, nil if none.
func bodyID(body []byte) json.RawMessage {
	var m struct {
		ID json.RawMessage `json:"id"`
	}
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	return m.ID
}
