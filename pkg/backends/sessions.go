package backends

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends/transport"
	"github.com/vmcp/vmcp/pkg/identity"
)

// SessionSet holds one client session's backend sessions: at most one per
// backend, opened lazily on first use and all closed by Close. Backend state
// kept for one client session is never reachable from another.
type SessionSet struct {
	m       *Manager
	options func(*Backend) SessionOptions

	header atomic.Pointer[http.Header]        // the client's forwarded headers (Forward)
	bound  atomic.Pointer[identity.Principal] // whose token its sessions carry (Bind)

	mu     sync.Mutex
	open   map[string]*sessionEntry
	closed bool
}

type sessionEntry struct {
	b     *Backend      // the backend it was opened on (a reload may replace it)
	ready chan struct{} // closed when cs/err are set
	cs    *mcp.ClientSession
	err   error
	// broken is set when a call on cs failed below JSON-RPC (the SDK then
	// shuts the connection down, but cs.Wait returns only later), so the
	// next Get does not hand out a session whose calls fail "client is
	// closing".
	broken atomic.Bool
	// mux shares a stdio or SSE session's connection (connmux.go; nil
	// for streamable HTTP).
	mux *connMux
}

// watchCalls is sending middleware on e's session that marks e broken when
// a call fails with a transport error rather than a JSON-RPC error.
func watchCalls(e *sessionEntry) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			var we *jsonrpc.Error
			if err != nil && ctx.Err() == nil && !errors.As(err, &we) {
				e.broken.Store(true)
			}
			return res, err
		}
	}
}

// NewSessionSet returns an empty set whose backend sessions are opened with
// options(backend): the client's capabilities, its server-to-client
// handlers and tap, all bound to the owning client session.
func (m *Manager) NewSessionSet(options func(*Backend) SessionOptions) *SessionSet {
	return &SessionSet{m: m, options: options, open: map[string]*sessionEntry{}}
}

// Get returns the backend session for backend name, opening it on first use.
// Concurrent first calls share one open. A failed open is not cached. A
// shared stdio backend gives its control connection (isolation.go).
func (s *SessionSet) Get(ctx context.Context, name string) (*mcp.ClientSession, error) {
	b, err := s.m.Backend(name)
	if err != nil {
		return nil, err
	}
	if b.sharedProcess() {
		return b.Shared()
	}
	e, err := s.get(ctx, b)
	if err != nil {
		return nil, err
	}
	return e.cs, nil
}

// get is Get's entry for b, whose cs is set.
func (s *SessionSet) get(ctx context.Context, b *Backend) (*sessionEntry, error) {
	name := b.Name()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, ErrSessionClosed
	}
	e, ok := s.open[name]
	if ok && e.b != b { // opened on a backend a reload replaced: that one closes it once drained
		delete(s.open, name)
		ok = false
	}
	if ok && e.cs != nil && e.broken.Load() {
		delete(s.open, name)
		go e.cs.Close()
		ok = false
	}
	if !ok {
		e = &sessionEntry{b: b, ready: make(chan struct{})}
		s.open[name] = e
		s.mu.Unlock()
		s.connect(b, e)
	} else {
		s.mu.Unlock()
	}
	select {
	case <-e.ready:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	if e.err != nil {
		return nil, e.err
	}
	return e, nil
}

// connect opens e's backend session and installs a watcher that forgets it
// when the backend side closes, so the next Get reopens.
func (s *SessionSet) connect(b *Backend, e *sessionEntry) {
	opts := s.options(b)
	opts.Header = s.held
	opts.Sending = append(opts.Sending, watchCalls(e))
	if b.perPrincipal { // its list_changed updates the principal's own inventory (relist.go)
		opts.Receiving = append(opts.Receiving, s.relistOn(b, e))
	}
	var mux *connMux
	opts.onConn = func(m *connMux) { mux = m }
	cs, _, err := b.open(transport.WithBinding(context.Background(), s.principal), opts)
	if err == nil && opts.Init != nil {
		ictx, cancel := context.WithTimeout(context.Background(), b.Timeout())
		if err = opts.Init(ictx, cs); err != nil {
			err = fmt.Errorf("backend %q: session init: %w", b.Name(), err)
		}
		cancel()
	}
	if err == nil {
		err = s.opened(b, e, opts, cs, mux)
	}
	if err != nil && cs != nil {
		_ = cs.Close()
		cs = nil
	}
	s.mu.Lock()
	if err == nil && s.closed {
		err = ErrSessionClosed
		_ = cs.Close()
		cs = nil
	}
	if err != nil {
		delete(s.open, b.Name())
	}
	e.cs, e.err, e.mux = cs, err, mux
	s.mu.Unlock()
	close(e.ready)
	if cs != nil {
		go func() {
			_ = cs.Wait()
			s.mu.Lock()
			if s.open[b.Name()] == e {
				delete(s.open, b.Name())
			}
			s.mu.Unlock()
		}()
	}
}

// Len is the number of open backend sessions.
func (s *SessionSet) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

// Close closes every backend session (an upstream DELETE for streamable
// HTTP backends, process exit for stdio). Later Gets fail.
func (s *SessionSet) Close() error {
	s.mu.Lock()
	s.closed = true
	entries := s.open
	s.open = map[string]*sessionEntry{}
	s.mu.Unlock()
	var first error
	for name, e := range entries {
		<-e.ready
		if e.cs == nil {
			continue
		}
		if err := e.cs.Close(); err != nil && first == nil {
			first = fmt.Errorf("closing backend %q session: %w", name, err)
		}
	}
	return first
}

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
	// headers (SessionSet.Forward): every HTTP request on the session that
	// carries no client request's own (initialize, the GET stream, DELETE,
	// notifications) gets the backend's forward_headers from it.
	Header func() http.Header
	// Legacy opens the session for a Legacy client: at a Legacy revision
	// where the backend keeps Legacy sessions (revision.go).
	Legacy bool
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
