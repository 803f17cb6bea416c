package backends

import (
	"context"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends/transport"
)

// SessionOptions configure one backend session opened for a client session.
type SessionOptions struct {
	Client    *mcp.ClientOptions // capabilities and server-to-client handlers
	Receiving []mcp.Middleware   // client receiving middleware (e.g. roots/list)
	Sending   []mcp.Middleware   // client sending middleware
	Tap       transport.Tap      // may be nil
	// TapLogs also gives the Tap notifications/message (per-call sinks).
	TapLogs bool
	// CacheGuard zeroes the ttlMs of results before the go-sdk client can
	// cache them (transport/cacheguard.go); for connections shared by many clients.
	CacheGuard bool
	// Init runs once on the new session before first use (e.g. to apply
	// the client's log level); an error closes the session and fails Get.
	Init func(context.Context, *mcp.ClientSession) error
	// Opened runs once on the new session, after Init, before first use,
	// with the session as the call core sends on it (e.g. to apply the
	// client's log level through pkg/upstream); an error closes the
	// session and fails Get.
	Opened func(context.Context, OpenSession) error
	// Header, if set, is the owning client session's latest forwarded
	// headers (session.Set.Forward): every HTTP request on the session that
	// carries no client request's own (initialize, the GET stream, DELETE,
	// notifications) gets the backend's forward_headers from it.
	Header func() http.Header
	// Legacy opens the session for a Legacy client: at a Legacy revision
	// where the backend keeps Legacy sessions (revision.go).
	Legacy bool
	// Broken, if set, is told when a request the call core sent on the
	// session (OpenOwn's RawSession or ConnSession) failed below JSON-RPC
	// or the backend forgot the session (HTTP 404): its owner opens anew.
	Broken func()
	// onConn is told a stdio or SSE session's connection (connmux.go).
	onConn func(*connMux)
}

// sessionHTTP is b's pooled client as one session's connection uses it:
// with the session's forwarded headers, its principal (ctx's binding,
// outbound.go), its tap, cache guard and answer checks.
func (b *Backend) sessionHTTP(ctx context.Context, opts SessionOptions) *http.Client {
	hc := b.http
	if opts.Header != nil && len(b.cfg.ForwardHeaders) > 0 {
		hc = transport.HeldHTTP(hc, opts.Header)
	}
	if f := transport.BindingOf(ctx); f != nil && b.out != nil {
		hc = transport.BoundHTTP(hc, f)
	}
	if opts.Tap != nil && b.isHTTP() { // other transports are tapped at the connection (connectWith)
		hc = transport.TapHTTP(hc, opts.Tap, opts.TapLogs)
	}
	if opts.CacheGuard {
		hc = transport.GuardHTTP(hc)
	}
	if b.isHTTP() { // other transports are checked at the connection (connectWith)
		hc = transport.CheckHTTP(hc, b.cfg.Name)
	}
	return hc
}
