// Package session holds one client session's own backend sessions (Set):
// at most one per backend, opened lazily with the client's capabilities,
// bound to its principal and forwarded headers, never reachable from
// another client session (isolation), and how the call core sends on them.
// Backends, their control connections and health are pkg/backends'.
package session

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/backends/transport"
	"github.com/vmcp/vmcp/pkg/identity"
)

// Set holds one client session's backend sessions: at most one per
// backend, opened lazily on first use and all closed by Close. Backend state
// kept for one client session is never reachable from another.
type Set struct {
	m       *backends.Manager
	options func(*backends.Backend) backends.SessionOptions

	header atomic.Pointer[http.Header]        // the client's forwarded headers (Forward)
	bound  atomic.Pointer[identity.Principal] // whose token its sessions carry (Bind)

	mu     sync.Mutex
	open   map[string]*entry
	closed bool
}

type entry struct {
	b     *backends.Backend // the backend it was opened on (a reload may replace it)
	ready chan struct{}     // closed when cs/err/o are set
	cs    *mcp.ClientSession
	err   error
	o     backends.OpenSession // how the call core sends on cs (zero: it cannot)
	// broken is set when a call on cs failed below JSON-RPC (the SDK then
	// shuts the connection down, but cs.Wait returns only later), so the
	// next Get does not hand out a session whose calls fail "client is
	// closing".
	broken atomic.Bool
}

// watchCalls is sending middleware on e's session that marks e broken when
// a call fails with a transport error rather than a JSON-RPC error.
func watchCalls(e *entry) mcp.Middleware {
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

// New returns an empty set of m's backends whose backend sessions are
// opened with options(backend): the client's capabilities, its
// server-to-client handlers and tap, all bound to the owning client
// session.
func New(m *backends.Manager, options func(*backends.Backend) backends.SessionOptions) *Set {
	return &Set{m: m, options: options, open: map[string]*entry{}}
}

// Get returns the backend session for backend name, opening it on first use.
// Concurrent first calls share one open. A failed open is not cached. A
// shared stdio backend gives its control connection (backends.SharedProcess).
func (s *Set) Get(ctx context.Context, name string) (*mcp.ClientSession, error) {
	b, err := s.m.Backend(name)
	if err != nil {
		return nil, err
	}
	if b.SharedProcess() {
		return b.Shared()
	}
	e, err := s.get(ctx, b)
	if err != nil {
		return nil, err
	}
	return e.cs, nil
}

// get is Get's entry for b, whose cs is set.
func (s *Set) get(ctx context.Context, b *backends.Backend) (*entry, error) {
	name := b.Name()
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil, backends.ErrSessionClosed
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
		e = &entry{b: b, ready: make(chan struct{})}
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
func (s *Set) connect(b *backends.Backend, e *entry) {
	opts := s.options(b)
	opts.Header = s.held
	opts.Broken = func() { e.broken.Store(true) }
	opts.Sending = append(opts.Sending, watchCalls(e))
	if b.PerPrincipal() { // its list_changed updates the principal's own inventory (relist.go)
		opts.Receiving = append(opts.Receiving, s.relistOn(b, e))
	}
	ctx := transport.WithGone(transport.WithBinding(context.Background(), s.principal), func() { forget(e) })
	cs, o, err := b.OpenOwn(ctx, opts)
	if err == nil && opts.Init != nil {
		ictx, cancel := context.WithTimeout(context.Background(), b.Timeout())
		if err = opts.Init(ictx, cs); err != nil {
			err = fmt.Errorf("backend %q: session init: %w", b.Name(), err)
		}
		cancel()
	}
	if err == nil {
		err = opened(b, opts, o)
	}
	if err != nil && cs != nil {
		_ = cs.Close()
		cs = nil
	}
	s.mu.Lock()
	if err == nil && s.closed {
		err = backends.ErrSessionClosed
		_ = cs.Close()
		cs = nil
	}
	if err != nil {
		delete(s.open, b.Name())
	}
	e.cs, e.err, e.o = cs, err, o
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

// forget closes e's session once the backend said it forgot it (its GET
// stream's 404), so the next Get, and whoever waits on the session, see it
// gone.
func forget(e *entry) {
	e.broken.Store(true)
	go func() {
		<-e.ready
		if e.cs != nil {
			_ = e.cs.Close()
		}
	}()
}

// Len is the number of open backend sessions.
func (s *Set) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.open)
}

// Close closes every backend session (an upstream DELETE for streamable
// HTTP backends, process exit for stdio). Later Gets fail.
func (s *Set) Close() error {
	s.mu.Lock()
	s.closed = true
	entries := s.open
	s.open = map[string]*entry{}
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
