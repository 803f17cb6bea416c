package upstream

import (
	"context"
	"errors"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	bsession "github.com/vmcp/vmcp/pkg/backends/session"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// A per-principal backend that keeps Legacy sessions sends its
// list_changed and resources/updated only on a session's GET stream. A
// Modern client's listen stream has no backend session, so its Listens
// open their own (ownSessions): at a Legacy revision, bound to the
// stream's principal and forwarded headers (that principal's exchanged
// token on every request), never shared, closed with the stream. Their
// list_changed list the backend again for that principal (session.Set's
// relister); their resources/updated reach the stream's held URIs only.

// errOwnClosed: the listen stream ended before its session was opened.
var errOwnClosed = errors.New("listen stream ended")

// ownSessions are the backend sessions one Modern listen stream holds on
// per-principal Legacy backends, and where their resources/updated go.
type ownSessions struct {
	set *bsession.Set

	mu      sync.Mutex
	deliver map[listenKey]*heldOwn  // by backend and backend URI
	kept    map[string]func(string) // backends whose session is kept open, and their relisting (ownkeep.go)
}

// heldOwn is one resource subscription held on a stream's own session.
type heldOwn struct {
	req     *Request // its resources/subscribe
	t       Target
	deliver func()
}

// own returns l's own backend sessions for req's principal and forwarded
// headers, made on first use (nil once l is closed).
func (l *Listens) own(c *Core, req *Request) *ownSessions {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	if l.sessions == nil {
		o := &ownSessions{deliver: map[listenKey]*heldOwn{}, kept: map[string]func(string){}}
		o.set = bsession.New(c.mgr, func(b *backends.Backend) backends.SessionOptions { return o.options(c, b) })
		o.set.Bind(req.Principal)
		o.set.Forward(req.Header)
		l.sessions = o
	}
	return l.sessions
}

// options open a listen stream's backend session at a Legacy revision
// declaring no capabilities: its resources/updated go to the held URIs;
// what else reaches it (progress, logs, asks) belongs to no request and
// is counted undeliverable.
func (o *ownSessions) options(c *Core, b *backends.Backend) backends.SessionOptions {
	name := b.Name()
	return backends.SessionOptions{
		Client: &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
			MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
			ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
				o.updated(c, name, r.Params.URI)
			}},
		Legacy:  true,
		TapLogs: true,
		Tap: func(_ context.Context, msg *jsonrpc.Request) {
			c.undeliverable(msg.Method, name, errors.New("on a listen stream's own backend session, off any request"))
		},
	}
}

// updated delivers backend's resources/updated of uri to its holder.
func (o *ownSessions) updated(c *Core, backend, uri string) {
	o.mu.Lock()
	h := o.deliver[listenKey{backend, uri}]
	o.mu.Unlock()
	if h == nil {
		c.undeliverable("notifications/resources/updated", backend, errors.New("no listen stream holds the resource"))
		return
	}
	h.deliver()
}

// holdOnOwn subscribes t.Name on the stream's own Legacy session on t's
// backend (resources/subscribe through Do) and delivers its updates with
// the advertised URI req.Name; the session is kept open (and subscribed
// again) while the stream lives.
func (l *Listens) holdOnOwn(ctx context.Context, c *Core, req *Request, t Target, deliver func(uri string)) error {
	o := l.own(c, req)
	if o == nil {
		return mcpmsg.WireError(t.Backend.Name(), errOwnClosed)
	}
	t.Via = ViaSession
	advertised := req.Name
	h := &heldOwn{t: t, deliver: func() { deliver(advertised) },
		req: &Request{Method: "resources/subscribe", Name: req.Name, Revision: req.Revision,
			Principal: req.Principal, Header: req.Header, Sessions: o.set}}
	key := listenKey{t.Backend.Name(), t.Name}
	o.mu.Lock()
	o.deliver[key] = h
	o.mu.Unlock()
	if err := c.raw(ctx, h.req, t); err != nil {
		o.mu.Lock()
		delete(o.deliver, key)
		o.mu.Unlock()
		return err
	}
	return l.keep(ctx, c, o, t.Backend, nil)
}

// closeOwn closes the stream's own backend sessions (an upstream DELETE
// each); later own calls return nil.
func (l *Listens) closeOwn() {
	l.mu.Lock()
	o := l.sessions
	l.closed, l.sessions = true, nil
	l.mu.Unlock()
	if o != nil {
		_ = o.set.Close()
	}
}

// watchOnOwn opens the stream's own Legacy session on b for req's
// principal and keeps it open while the stream lives: its GET stream's
// list_changed list b again for that principal alone (session.Set's
// relister); changed runs after a reopening (changes may have been
// missed).
func (l *Listens) watchOnOwn(ctx context.Context, c *Core, req *Request, b *backends.Backend, changed func(string)) error {
	o := l.own(c, req)
	if o == nil {
		return mcpmsg.WireError(b.Name(), errOwnClosed)
	}
	return l.keep(ctx, c, o, b, changed)
}
