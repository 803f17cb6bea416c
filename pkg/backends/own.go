package backends

import (
	"context"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/wire"
)

// What pkg/backends/session (a client's own backend sessions and their
// isolation) needs of a backend: OpenOwn to open one client's session and
// learn how the call core sends on it, SharedProcess and SharedConn for
// isolation: shared, ForwardHeaders for what a client session captures,
// PublishFor for a per-principal backend's relisting, and Logger.

// OpenSession is one open backend session of a client's session.Set as
// the call core (pkg/upstream) sends on it outside a client's call: a
// notification (notifications/roots/list_changed) or a request of the
// session's own (logging/setLevel). Exactly one of Raw (streamable HTTP)
// and Conn (stdio, SSE) is set; the zero value is no session.
type OpenSession struct {
	Backend *Backend
	Raw     *RawSession
	Conn    *ConnSession
	Init    *mcp.InitializeResult // the backend's answer to initialize
}

// Legacy reports whether the session speaks a Legacy revision (it keeps
// session state: a log level, roots to re-list).
func (o OpenSession) Legacy() bool {
	return o.Init != nil && !wire.IsModern(o.Init.ProtocolVersion)
}

// OpenOwn opens one client's own backend session as Open does, and returns
// with it how the call core sends on it: Raw over streamable HTTP (its
// posts without a client request's headers take opts.Header's), Conn over
// stdio and SSE (the client's logs and asks), or the zero OpenSession when
// the backend gave no InitializeResult. opts.Broken is told of failed
// sends. The caller closes the session.
func (b *Backend) OpenOwn(ctx context.Context, opts SessionOptions) (*mcp.ClientSession, OpenSession, error) {
	var mux *connMux
	opts.onConn = func(m *connMux) { mux = m }
	cs, _, err := b.open(ctx, opts)
	if err != nil {
		return nil, OpenSession{}, err
	}
	ir := cs.InitializeResult()
	if ir == nil {
		return cs, OpenSession{}, nil
	}
	o := OpenSession{Backend: b, Init: ir}
	v := ir.ProtocolVersion
	switch {
	case b.isHTTP():
		o.Raw = &RawSession{b: b, broken: opts.Broken, id: cs.ID(), version: v, modern: wire.IsModern(v), held: opts.Header}
	case mux != nil:
		o.Conn = &ConnSession{b: b, broken: opts.Broken, own: true, mux: mux, version: v, modern: wire.IsModern(v)}
	default:
		return cs, OpenSession{}, nil
	}
	return cs, o, nil
}

// Logger is b's logger (its records name the backend).
func (b *Backend) Logger() *slog.Logger { return b.log }

// ForwardHeaders are the header names client sessions capture for their
// backend sessions (every backend's forward_headers, canonical; nil for
// none). The slice is shared: callers do not modify it.
func (m *Manager) ForwardHeaders() []string { return *m.forward.Load() }

// PublishFor publishes inv, listed with pr's credential, as pr's own
// inventory (aggregator.UpdateFor: it tells pr's clients when their view
// changed).
func (m *Manager) PublishFor(pr identity.Principal, inv aggregator.Inventory) {
	m.agg.UpdateFor(pr.Key(), inv)
}

// Sessions is a client session's own backend sessions (session.Set), on
// which DiscoverFor and RelistFor list a per-principal backend: Get opens
// (or returns) the session on backend name.
type Sessions interface {
	Get(ctx context.Context, name string) (*mcp.ClientSession, error)
}
