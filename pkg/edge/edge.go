// Package edge is what every HTTP request to vmcp meets before it is
// routed, in this order (pkg/vmcp composes them; Origins only on the MCP
// endpoint):
//
//   - HostGuard: the DNS-rebinding guard. A request arriving on a loopback
//     address must name a loopback Host or one of http.allowed_hosts (403
//     otherwise), on every endpoint: MCP, /healthz, /readyz, /status,
//     /metrics.
//   - Origins: browser Origins are validated (403 unless same-host or in
//     http.allowed_origins; Streamable HTTP: servers MUST validate Origin)
//     and CORS is answered for the allowed ones (github.com/rs/cors);
//     Guard is the check without CORS (/status).
//   - ReadBody: the request body is read whole within http.read_body_timeout
//     (408 beyond) and http.max_body_bytes (413 beyond), then handed on in
//     memory, so no handler ever waits on a slow client's body.
//   - NewServer: the one http.Server construction, with header and idle
//     timeouts and no write timeout, since SSE responses live long.
//
// A request refused before its body is read closes its connection at once,
// so a stalled body holds nothing.
package edge

import (
	"log/slog"
	"net/http"
	"time"
)

// Timeouts bound what a client can hold without sending anything useful.
type Timeouts struct {
	// ReadHeader bounds the request line and headers (http.Server
	// ReadHeaderTimeout; http.read_header_timeout).
	ReadHeader time.Duration
	// Idle closes a keep-alive connection waiting for its next request
	// (http.Server IdleTimeout; http.idle_timeout).
	Idle time.Duration
}

// NewServer is the http.Server every vmcp listener uses: h behind the
// header and idle timeouts of t. It sets no ReadTimeout or WriteTimeout:
// bodies are bounded per request by ReadBody, and server-wide write
// deadlines would cut GET streams, subscriptions/listen and long calls.
// log (may be nil) receives net/http's own errors at Warn.
func NewServer(h http.Handler, t Timeouts, log *slog.Logger) *http.Server {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: t.ReadHeader, IdleTimeout: t.Idle}
	if log != nil {
		srv.ErrorLog = slog.NewLogLogger(log.Handler(), slog.LevelWarn)
	}
	return srv
}
