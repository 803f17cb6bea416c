package backends

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

// OpenSession is one open backend session of a client's SessionSet as the
// call core (pkg/upstream) sends on it outside a client's call: a
// notification (notifications/roots/list_changed) or a request of the
// session's own (logging/setLevel). Exactly one of Raw (streamable HTTP)
// and Conn (stdio, SSE) is set.
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

// Open lists the set's open backend sessions (not those still opening).
func (s *SessionSet) Open() []OpenSession {
	s.mu.Lock()
	entries := make([]*sessionEntry, 0, len(s.open))
	for _, e := range s.open {
		select {
		case <-e.ready:
			if e.cs != nil {
				entries = append(entries, e)
			}
		default:
		}
	}
	s.mu.Unlock()
	out := make([]OpenSession, 0, len(entries))
	for _, e := range entries {
		if o, ok := s.openSession(e.b, e, e.cs, e.mux); ok {
			out = append(out, o)
		}
	}
	return out
}

// openSession is the OpenSession of e, whose go-sdk session is cs (and,
// over stdio or SSE, its connection mux); false when it has no
// InitializeResult or, over stdio or SSE, no mux.
func (s *SessionSet) openSession(b *Backend, e *sessionEntry, cs *mcp.ClientSession, mux *connMux) (OpenSession, bool) {
	ir := cs.InitializeResult()
	if ir == nil {
		return OpenSession{}, false
	}
	o := OpenSession{Backend: b, Init: ir}
	v := ir.ProtocolVersion
	switch {
	case b.isHTTP():
		o.Raw = &RawSession{b: b, e: e, id: cs.ID(), version: v, modern: wire.IsModern(v), held: s.held}
	case mux != nil:
		o.Conn = &ConnSession{b: b, e: e, mux: mux, version: v, modern: wire.IsModern(v)}
	default:
		return OpenSession{}, false
	}
	return o, true
}

// opened runs opts.Opened on the session just opened (cs; mux over stdio
// and SSE) before its first use; an error closes it.
func (s *SessionSet) opened(b *Backend, e *sessionEntry, opts SessionOptions, cs *mcp.ClientSession, mux *connMux) error {
	if opts.Opened == nil {
		return nil
	}
	o, ok := s.openSession(b, e, cs, mux)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.Timeout())
	defer cancel()
	if err := opts.Opened(ctx, o); err != nil {
		return fmt.Errorf("backend %q: session init: %w", b.Name(), err)
	}
	return nil
}
