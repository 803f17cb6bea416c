package session

import (
	"context"
	"fmt"

	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/config"
)

// Open lists the set's open backend sessions (not those still opening) as
// the call core sends on them.
func (s *Set) Open() []backends.OpenSession {
	s.mu.Lock()
	out := make([]backends.OpenSession, 0, len(s.open))
	for _, e := range s.open {
		select {
		case <-e.ready:
			if e.cs != nil && e.o.Backend != nil {
				out = append(out, e.o)
			}
		default:
		}
	}
	s.mu.Unlock()
	return out
}

// opened runs opts.Opened on o, the session just opened on b, before its
// first use; an error closes it.
func opened(b *backends.Backend, opts backends.SessionOptions, o backends.OpenSession) error {
	if opts.Opened == nil || o.Backend == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), b.Timeout())
	defer cancel()
	if err := opts.Opened(ctx, o); err != nil {
		return fmt.Errorf("backend %q: session init: %w", b.Name(), err)
	}
	return nil
}

// Raw returns the client's backend session for backend name (opened on
// first use, like Get) when its requests may be relayed raw: a streamable
// HTTP backend, at whichever revision the session negotiated (a Modern
// one's input_required results are the relay's rounds). ok is false for
// other transports and before the backend first connected.
func (s *Set) Raw(ctx context.Context, name string) (r *backends.RawSession, ok bool, err error) {
	b, err := s.m.Backend(name)
	if err != nil {
		return nil, false, err
	}
	if t := b.Transport(); t != config.TransportStreamableHTTP && t != "" {
		return nil, false, nil
	}
	if b.ProtocolVersion() == "" {
		return nil, false, nil
	}
	e, err := s.get(ctx, b)
	if err != nil {
		return nil, false, err
	}
	return e.o.Raw, e.o.Raw != nil, nil
}

// Conn returns the client's backend session for backend name (opened on
// first use, like Get) when it is a stdio or SSE backend; ok is false for
// streamable HTTP (Raw). A stdio backend with isolation: shared gives its
// control connection, on which the backend's logs and asks reach no
// request (backends.SharedConn).
func (s *Set) Conn(ctx context.Context, name string) (r *backends.ConnSession, ok bool, err error) {
	b, err := s.m.Backend(name)
	if err != nil || b.HTTP() {
		return nil, false, err
	}
	if b.SharedProcess() {
		r, err := b.SharedConn()
		return r, err == nil, err
	}
	e, err := s.get(ctx, b)
	if err != nil {
		return nil, false, err
	}
	return e.o.Conn, e.o.Conn != nil, nil
}
