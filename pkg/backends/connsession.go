package backends

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/wire"
)

// ConnSession is a stdio or SSE backend session as the call core writes
// requests on it raw: the go-sdk client opened and initialized it and
// still serves its own requests on it; a connMux shares the connection.
type ConnSession struct {
	b       *Backend
	broken  func() // told of a transport failure (nil: the control connection)
	own     bool   // a client's own session (OpenOwn)
	mux     *connMux
	version string
	modern  bool
	sole    bool // the control connection as ControlConn gives it (connMux.only)
}

// SharedConn is b's control connection (stdio or SSE) as a ConnSession
// of no client: a request written on it gets its response, its progress
// and the notifications naming it (a listen's subscription id), never
// logs or asks. For a listen vmcp holds there itself, and for the client
// sessions of a stdio backend with isolation: shared (isolation.go). It
// fails with ErrBackendDown while the backend is down.
func (b *Backend) SharedConn() (*ConnSession, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != StateReady || b.control == nil || b.controlMux == nil || b.init == nil {
		return nil, fmt.Errorf("backend %q: %w", b.cfg.Name, ErrBackendDown)
	}
	v := b.init.ProtocolVersion
	return &ConnSession{b: b, mux: b.controlMux, version: v, modern: wire.IsModern(v)}, nil
}

// ControlConn is b's control connection (stdio or SSE) as a ConnSession
// for requests of no principal (a Modern client's with auth off, that
// cannot be asked): progress reaches a request by its token, logs while
// it is the only request in flight, asks never. It fails with
// ErrBackendDown while the backend is down or reached over streamable HTTP.
func (b *Backend) ControlConn() (*ConnSession, error) {
	r, err := b.SharedConn()
	if err != nil {
		return nil, err
	}
	r.sole = true
	return r, nil
}

// Backend is the backend this session belongs to.
func (r *ConnSession) Backend() *Backend { return r.b }

// Modern reports whether the session speaks a Modern revision (requests
// need RequestMeta; results may be input_required; no asks).
func (r *ConnSession) Modern() bool { return r.modern }

// Own reports whether the session belongs to one client (its logs and
// asks during a request go to that request); false for the control
// connection of a stdio backend with isolation: shared.
func (r *ConnSession) Own() bool { return r.own }

// RequestMeta is RawSession.RequestMeta for this session's revision.
func (r *ConnSession) RequestMeta(meta, caps json.RawMessage, logLevel string) (json.RawMessage, error) {
	if !r.modern {
		return meta, nil
	}
	return modernMeta(r.b, r.version, meta, caps, logLevel)
}

// Start writes body, a request whose id is a string beginning "vmcp-u",
// on the connection, and returns the Exchange that yields what the
// backend sends for it; tok is the request's progressToken as TokenOf
// gives it ("" none). ctx ends the Exchange (not the request: the caller
// tells the backend with notifications/cancelled).
func (r *ConnSession) Start(ctx context.Context, tok string, body []byte) (*Exchange, error) {
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return nil, err
	}
	var id string
	if req, ok := msg.(*jsonrpc.Request); ok {
		id, _ = req.ID.Raw().(string)
	}
	if !strings.HasPrefix(id, ownedPrefix) {
		return nil, fmt.Errorf("not a request with an id %s<n>", ownedPrefix)
	}
	e, err := r.mux.startAs(&Exchange{m: r.mux, id: id, own: r.Own(), sole: r.sole, ctx: ctx, in: make(chan []byte, 1)}, tok)
	if err != nil {
		return nil, r.failed(err)
	}
	if err := r.mux.Connection.Write(ctx, msg); err != nil {
		e.Close()
		return nil, r.failed(err)
	}
	return e, nil
}

// Notify writes a notification or a response (an answer) on the
// connection.
func (r *ConnSession) Notify(ctx context.Context, body []byte) error {
	msg, err := jsonrpc.DecodeMessage(body)
	if err != nil {
		return err
	}
	if resp, ok := msg.(*jsonrpc.Response); ok {
		r.mux.answered(resp.ID)
	}
	if err := r.mux.Connection.Write(ctx, msg); err != nil {
		return r.failed(err)
	}
	return nil
}

// failed marks the session broken after a transport failure (the next Get
// opens a new one) and names the backend.
func (r *ConnSession) failed(err error) error {
	if r.broken != nil {
		r.broken()
	}
	return fmt.Errorf("%w: %w", ErrBackendDown, err)
}
