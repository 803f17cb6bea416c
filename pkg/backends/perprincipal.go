package backends

import (
	"context"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends/transport"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// A backend that takes each user's own token (auth.type: token_exchange,
// outbound.go) would answer vmcp's own control connection 401: vmcp has
// no token of its own for it. So it has no control connection (state
// per-principal, which counts as available) and is discovered per
// principal: the principal's first use of vmcp (Legacy initialize, its
// first Modern request) lists it with that principal's credential and
// publishes the result as that principal's own inventory
// (aggregator.UpdateFor), which only that principal's catalogue holds.

// rediscoverAfter is how long a Modern principal's discovery stands before
// its next request lists the per-principal backends again.
const rediscoverAfter = 5 * time.Minute

// PerPrincipal reports whether b is discovered and used per principal only.
func (b *Backend) PerPrincipal() bool { return b.perPrincipal }

// openPerPrincipal opens a session on a per-principal backend: its
// protocol version is negotiated by the first session (there is no
// control connection to learn it from) and remembered with its
// capabilities.
func (b *Backend) openPerPrincipal(ctx context.Context, opts SessionOptions) (*mcp.ClientSession, *mcp.Client, error) {
	cs, client, err := b.connect(ctx, opts, b.ProtocolVersion(), 2)
	if err != nil {
		return nil, nil, err
	}
	b.mu.Lock()
	if b.init == nil {
		b.init = cs.InitializeResult()
	}
	b.mu.Unlock()
	return cs, client, nil
}

// ListSession walks all four lists of b on session cs (one opened with a
// principal's credential), without touching the control connection's
// cache hints.
func (b *Backend) ListSession(ctx context.Context, cs *mcp.ClientSession) (aggregator.Inventory, error) {
	return b.inventory(ctx, cs, map[string]mcpmsg.CacheHint{})
}

// DiscoverFor lists every per-principal backend with pr's credential and
// publishes each whole inventory (tools, prompts, resources, templates)
// as pr's own (a failed one is withdrawn). set is
// pr's Legacy client session's own (session.Set), whose backend sessions are used
// (and stay open); with set nil (Modern) each backend is listed on a
// session of its own carrying header, closed after. Anonymous principals
// get nothing.
func (m *Manager) DiscoverFor(ctx context.Context, pr identity.Principal, header http.Header, set Sessions) {
	if pr.Anonymous() {
		return
	}
	var wg sync.WaitGroup
	for _, b := range m.backends() { // under lock: a reload may swap the list
		if !b.perPrincipal {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			inv, err := b.discover(ctx, header, set)
			if err != nil {
				b.log.Warn("per-principal backend not listed for this principal", "principal", pr.String(), "error", err)
				m.agg.RemoveFor(pr.Key(), b.Name())
				return
			}
			m.agg.UpdateFor(pr.Key(), inv)
		}()
	}
	wg.Wait()
}

// discover lists b with one principal's credential (DiscoverFor).
func (b *Backend) discover(ctx context.Context, header http.Header, set Sessions) (aggregator.Inventory, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*b.Timeout())
	defer cancel()
	if set != nil {
		cs, err := set.Get(ctx, b.Name())
		if err != nil {
			return aggregator.Inventory{}, err
		}
		return b.ListSession(ctx, cs)
	}
	ctx = transport.WithClientHeader(ctx, header) // the session's requests and the list's
	cs, err := b.Open(ctx, SessionOptions{Client: &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{}, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}})
	if err != nil {
		return aggregator.Inventory{}, err
	}
	defer cs.Close()
	return b.ListSession(ctx, cs)
}

// discovery is one Modern principal's discovery run.
type discovery struct {
	at   time.Time
	done chan struct{}
}

// Discovered runs DiscoverFor for a Modern request of pr carrying header:
// at pr's first request, and again rediscoverAfter later; pr's concurrent
// requests wait for one run (or their ctx). Nothing without per-principal
// backends or for an anonymous principal.
func (m *Manager) Discovered(ctx context.Context, pr identity.Principal, header http.Header) {
	if !m.perPrincipal.Load() || pr.Anonymous() {
		return
	}
	key := pr.Key()
	now := time.Now()
	m.discMu.Lock()
	d := m.disc[key]
	fresh := d == nil || now.Sub(d.at) > rediscoverAfter
	if fresh {
		for k, old := range m.disc {
			if now.Sub(old.at) > 2*rediscoverAfter {
				delete(m.disc, k)
			}
		}
		d = &discovery{at: now, done: make(chan struct{})}
		m.disc[key] = d
	}
	m.discMu.Unlock()
	if fresh {
		defer close(d.done)
		m.DiscoverFor(context.WithoutCancel(ctx), pr, header.Clone(), nil)
		return
	}
	select {
	case <-d.done:
	case <-ctx.Done():
	}
}

// setForwarding records what cfgs (built as bs) forward: the header names
// client sessions capture, and whether a backend is per-principal. At
// NewManager and at every reload's swap.
func (m *Manager) setForwarding(cfgs []config.Backend, bs []*Backend) {
	names := forwardNames(cfgs)
	m.forward.Store(&names)
	m.perPrincipal.Store(slices.ContainsFunc(bs, func(b *Backend) bool { return b.perPrincipal }))
}

// forwardNames is the union of the backends' forward_headers, canonical.
func forwardNames(cfgs []config.Backend) []string {
	var out []string
	for _, c := range cfgs {
		for _, h := range c.ForwardHeaders {
			if k := http.CanonicalHeaderKey(h); !slices.Contains(out, k) {
				out = append(out, k)
			}
		}
	}
	return out
}
