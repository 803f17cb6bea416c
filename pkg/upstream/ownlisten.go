package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// A per-principal backend has no control connection, so its list_changed
// reach vmcp only on a principal's own sessions. A Legacy backend session
// hears them on its GET stream (backends/session/relist.go); a Modern backend
// sends them only on a subscriptions/listen. WatchLists holds one such
// listen per owner (a Legacy client session whose backend session is
// Modern, or a Modern client's listen stream) and backend, with the
// principal's credential, never shared with another principal; for a
// Modern listen stream and a Legacy backend, a backend session of the
// stream's own (ownsession.go).

// WatchLists holds in l, for req's principal, what hears the list changes
// b advertises, when b is a per-principal backend (else it does nothing): with req.Sessions (a Legacy client's), a listen on
// its session when that is Modern (a Legacy one's GET stream hears them);
// else on a Modern backend one self-contained listen carrying req's
// principal and forwarded headers, on a Legacy one a session of l's own
// whose GET stream hears them (ownsession.go). Each list_changed, and
// each reopening after a drop, calls changed with the kind's method (""
// after a gap), on the listen's goroutine.
func (c *Core) WatchLists(ctx context.Context, req *Request, b *backends.Backend, l *Listens, changed func(method string)) error {
	want, ok := listKinds(b)
	if !ok || !b.PerPrincipal() || req.Principal.Anonymous() { // per-principal: streamable HTTP or SSE
		return nil
	}
	var sess session
	if req.Sessions != nil {
		s, err := sessionOf(ctx, req.Sessions, b)
		if err != nil {
			return mcpmsg.WireError(b.Name(), err)
		}
		if !s.Modern() {
			return nil
		}
		sess = s
	} else {
		raw, ok := b.Stateless()
		if !ok { // a Legacy one: the stream's own session's GET stream hears them (ownsession.go)
			return l.watchOnOwn(ctx, c, req, b, changed)
		}
		sess = httpSession{raw}
	}
	h := &heldListen{c: c, t: Target{Backend: b, Via: ViaDirect}, sess: sess, want: want, onGap: func() { changed("") }}
	h.onNote = func(method string, _ json.RawMessage) {
		if strings.HasSuffix(method, "/list_changed") {
			changed(method)
		}
	}
	return l.hold(ctx, listenKey{backend: b.Name()}, req, h)
}

// listKinds are the list changes b advertises (false: none).
func listKinds(b *backends.Backend) (mcp.NotificationSubscriptions, bool) {
	var n mcp.NotificationSubscriptions
	c := b.Capabilities()
	if c == nil {
		return n, false
	}
	n.ToolsListChanged = c.Tools != nil && c.Tools.ListChanged
	n.PromptsListChanged = c.Prompts != nil && c.Prompts.ListChanged
	n.ResourcesListChanged = c.Resources != nil && c.Resources.ListChanged
	return n, n.ToolsListChanged || n.PromptsListChanged || n.ResourcesListChanged
}

// HoldResource holds in l, for req's principal, a subscription to the
// resource t.Name on t's backend, a per-principal one,
// carrying that principal's credential and forwarded headers (never
// shared with another principal): a listen on a Modern backend,
// resources/subscribe on l's own session on a Legacy one (ownsession.go);
// answered once the backend acknowledged it; its resources/updated (and
// each reopening after a drop) call deliver with the advertised URI
// req.Name. Other backends fail: their subscriptions are shared.
func (c *Core) HoldResource(ctx context.Context, req *Request, t Target, l *Listens, deliver func(uri string)) error {
	b := t.Backend
	if !b.PerPrincipal() || req.Principal.Anonymous() {
		return mcpmsg.WireError(b.Name(), errors.New("no per-principal backend to hold a subscription on"))
	}
	if raw, ok := b.Stateless(); ok {
		return l.open(ctx, c, req, t, httpSession{raw}, deliver)
	}
	return l.holdOnOwn(ctx, c, req, t, deliver)
}
