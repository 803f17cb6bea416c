package backends

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/wire"
)

// Upstream resource subscriptions held on a backend's control connection
// for Modern clients' listen streams. vmcp subscribes each URI once per
// backend (the caller, pkg/subscriptions, counts references), by the
// backend's own mechanism: its own supervised listen stream per URI on a
// Modern backend (a POST on streamable HTTP, a request on the stdio or SSE
// control connection: a Modern server has no resources/subscribe),
// resources/subscribe on a Legacy one. The wanted set survives reconnects:
// each new control connection (an epoch) subscribes it again.

// resourceSubs is one backend's wanted subscriptions and current epoch.
// mu serialises subscribe, unsubscribe and epoch changes of the backend, so
// the backend's subscriptions always match the wanted set once they return.
type resourceSubs struct {
	mu   sync.Mutex
	want map[string]context.CancelFunc // URI -> stop of its own listen (nil otherwise)
	ep   *epoch
}

// epoch is the life of one control connection: its listen goroutines end
// with it.
type epoch struct {
	ctx     context.Context
	cancel  context.CancelFunc
	cs      *mcp.ClientSession
	version string
	wg      sync.WaitGroup
}

func (b *Backend) isHTTP() bool {
	return b.cfg.Transport == config.TransportStreamableHTTP || (b.cfg.Transport == "" && b.cfg.URL != "")
}

// startEpoch begins the epoch of a new control connection cs: vmcp's own
// list_changed listen (Modern HTTP backends that advertise list changes)
// and every wanted resource subscription, each followed by a
// resources/updated, since changes during the gap were missed.
func (b *Backend) startEpoch(parent context.Context, cs *mcp.ClientSession) {
	ep := &epoch{cs: cs}
	if r := cs.InitializeResult(); r != nil {
		ep.version = r.ProtocolVersion
	}
	ep.ctx, ep.cancel = context.WithCancel(parent)
	if lists, ok := listKinds(cs); ok && b.ownListens(ep.version) {
		ep.wg.Add(1)
		go func() {
			defer ep.wg.Done()
			b.superviseListen(ep.ctx, lists, nil, b.requestRefresh)
		}()
	}
	rs := &b.subs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.ep = ep
	for uri := range rs.want {
		ctx, cancel := context.WithTimeout(ep.ctx, b.Timeout())
		stop, err := b.applySub(ctx, ep, uri)
		cancel()
		rs.want[uri] = stop
		if err != nil {
			b.log.Warn("resource subscription not restored after reconnect", "uri", uri, "error", err)
			continue
		}
		b.resourceUpdated(uri)
	}
}

// stopEpoch ends the current epoch (the control connection is gone) and
// waits for its listen goroutines. The wanted set is kept.
func (b *Backend) stopEpoch() {
	rs := &b.subs
	rs.mu.Lock()
	ep := rs.ep
	rs.mu.Unlock()
	if ep == nil {
		return
	}
	ep.cancel() // first: a subscribe waiting on this epoch (holding rs.mu) gives up
	rs.mu.Lock()
	if rs.ep == ep {
		rs.ep = nil
	}
	for uri := range rs.want {
		rs.want[uri] = nil
	}
	rs.mu.Unlock()
	ep.wg.Wait()
}

// listKinds is what vmcp's list_changed listen asks a backend for: the
// kinds whose listChanged it advertises.
func listKinds(cs *mcp.ClientSession) (mcp.NotificationSubscriptions, bool) {
	var n mcp.NotificationSubscriptions
	r := cs.InitializeResult()
	if r == nil || r.Capabilities == nil {
		return n, false
	}
	c := r.Capabilities
	n.ToolsListChanged = c.Tools != nil && c.Tools.ListChanged
	n.PromptsListChanged = c.Prompts != nil && c.Prompts.ListChanged
	n.ResourcesListChanged = c.Resources != nil && c.Resources.ListChanged
	return n, n.ToolsListChanged || n.PromptsListChanged || n.ResourcesListChanged
}

// applySub subscribes uri on the epoch's connection, through the one
// sender (resources/subscribe on a Legacy control connection, else an own
// listen); for an own listen it returns the stop of its goroutine once the
// backend acknowledged it.
func (b *Backend) applySub(ctx context.Context, ep *epoch, uri string) (context.CancelFunc, error) {
	if !wire.IsModern(ep.version) {
		send, err := b.sender(ctx)
		if err != nil {
			return nil, err
		}
		return nil, send.Control(ctx, b, "resources/subscribe", &mcp.SubscribeParams{URI: uri})
	}
	lctx, stop := context.WithCancel(ep.ctx)
	first := make(chan error, 1)
	ep.wg.Add(1)
	go func() {
		defer ep.wg.Done()
		b.superviseListen(lctx, mcp.NotificationSubscriptions{ResourceSubscriptions: []string{uri}},
			first, func() { b.resourceUpdated(uri) })
	}()
	select {
	case err := <-first:
		if err != nil {
			stop()
			return nil, err
		}
		return stop, nil
	case <-ctx.Done():
		stop()
		return nil, ctx.Err()
	}
}

// subscribe adds uri to b's upstream subscriptions (idempotent). It fails
// while the control connection is down or when the backend refuses.
func (b *Backend) subscribe(ctx context.Context, uri string) error {
	rs := &b.subs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, ok := rs.want[uri]; ok {
		return nil
	}
	if rs.ep == nil {
		return fmt.Errorf("backend %q: %w", b.cfg.Name, ErrBackendDown)
	}
	stop, err := b.applySub(ctx, rs.ep, uri)
	if err != nil {
		return fmt.Errorf("backend %q: subscribing %s: %w", b.cfg.Name, uri, err)
	}
	if rs.want == nil {
		rs.want = map[string]context.CancelFunc{}
	}
	rs.want[uri] = stop
	return nil
}

// unsubscribe removes uri from b's upstream subscriptions (idempotent).
func (b *Backend) unsubscribe(ctx context.Context, uri string) error {
	rs := &b.subs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	stop, ok := rs.want[uri]
	if !ok {
		return nil
	}
	delete(rs.want, uri)
	switch {
	case stop != nil:
		stop()
	case rs.ep != nil && !wire.IsModern(rs.ep.version):
		send, err := b.sender(ctx)
		if err == nil {
			err = send.Control(ctx, b, "resources/unsubscribe", &mcp.UnsubscribeParams{URI: uri})
		}
		if err != nil {
			return fmt.Errorf("backend %q: unsubscribing %s: %w", b.cfg.Name, uri, err)
		}
	}
	return nil
}

// resourceUpdated reports a backend's resources/updated for uri to the
// manager's handler.
func (b *Backend) resourceUpdated(uri string) {
	if f := b.onUpdated.Load(); f != nil {
		(*f)(b.cfg.Name, uri)
	}
}

// SubscribeResource subscribes vmcp to uri on backend (see resourceSubs);
// updates are reported to the handler set with OnResourceUpdated.
func (m *Manager) SubscribeResource(ctx context.Context, backend, uri string) error {
	b, err := m.Backend(backend)
	if err != nil {
		return err
	}
	return b.subscribe(ctx, uri)
}

// UnsubscribeResource ends vmcp's subscription to uri on backend.
func (m *Manager) UnsubscribeResource(ctx context.Context, backend, uri string) error {
	b, err := m.Backend(backend)
	if err != nil {
		return err
	}
	return b.unsubscribe(ctx, uri)
}

// OnResourceUpdated sets the handler of resources/updated notifications
// received on control connections (for URIs subscribed with
// SubscribeResource). f must not block.
func (m *Manager) OnResourceUpdated(f func(backend, uri string)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onUpdated = &f
	for _, b := range m.list {
		b.onUpdated.Store(&f)
	}
}
