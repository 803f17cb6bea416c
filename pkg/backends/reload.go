package backends

import (
	"context"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/config"
)

// A reload changes the set of backends while clients are served (Apply):
// added backends connect first, with their inventories held back; then, in
// one step, the removed and replaced backends stop publishing, the new set
// becomes current and the aggregator rebuilds once (one list_changed per
// kind). The retired backends are drained in the background: after a grace
// for calls routed to them just before the swap (Timing.RetireGrace), their
// calls in flight finish or reach the backend's timeout, then every backend
// session opened on them closes (an upstream DELETE on HTTP) and their
// supervisors stop.

// gate is how a backend's inventories reach the aggregator (Manager.pubMu).
type gate struct {
	held    bool                 // Apply has not swapped it in yet: keep the last one
	retired bool                 // removed or replaced: drop everything
	pending aggregator.Inventory // the last inventory while held
	present bool                 // pending is an update (false: a removal)
	set     bool                 // pending was set
}

// Applied is what Apply changed, by backend name in config order.
type Applied struct {
	Added, Removed, Changed []string
	// Down names the added or changed backends whose first connection
	// attempt failed or had not finished within the wait (they keep
	// retrying and join the catalogue once connected).
	Down []string
}

// Apply makes cfgs the configured backends and p the aggregation policy:
// backends not in the running set are added, those no longer configured
// removed, those whose config differs replaced. It waits up to wait for
// the new backends' first connection attempts, then swaps them in and
// rebuilds the catalogue once; retired backends drain in the background.
func (m *Manager) Apply(cfgs []config.Backend, p aggregator.Policy, wait time.Duration) Applied {
	m.applyMu.Lock()
	defer m.applyMu.Unlock()
	cur := map[string]*Backend{}
	for _, b := range m.backends() {
		cur[b.Name()] = b
	}
	var out Applied
	fresh := map[string]*Backend{}
	var retired []*Backend
	for _, c := range cfgs {
		old, ok := cur[c.Name]
		switch {
		case !ok:
			out.Added = append(out.Added, c.Name)
		case !reflect.DeepEqual(old.cfg, c):
			out.Changed = append(out.Changed, c.Name)
			retired = append(retired, old)
		default:
			continue
		}
		b := m.newBackend(c)
		b.gate.held = true
		fresh[c.Name] = b
	}
	for _, b := range m.backends() {
		if !slices.ContainsFunc(cfgs, func(c config.Backend) bool { return c.Name == b.Name() }) {
			out.Removed = append(out.Removed, b.Name())
			retired = append(retired, b)
		}
	}
	var first sync.WaitGroup
	for _, c := range cfgs {
		if b := fresh[c.Name]; b != nil {
			first.Add(1)
			m.startBackend(b, first.Done)
		}
	}
	waitFor(&first, wait)
	out.Down = m.swap(cfgs, p, fresh, retired, out.Removed)
	for _, b := range retired {
		m.retire(b)
	}
	m.stateChanged()
	return out
}

// swap makes the backends of cfgs (fresh ones, else the running ones)
// current and hands the aggregator, in one rebuild, policy p, the fresh
// backends' held inventories and the removal of removed (and of a replaced
// backend whose replacement has none yet). It returns the fresh backends
// without an inventory.
func (m *Manager) swap(cfgs []config.Backend, p aggregator.Policy, fresh map[string]*Backend, retired []*Backend, removed []string) []string {
	m.pubMu.Lock()
	defer m.pubMu.Unlock()
	for _, b := range retired {
		b.gate.retired = true
	}
	removes := slices.Clone(removed)
	var updates []aggregator.Inventory
	var down []string
	m.mu.Lock()
	list := make([]*Backend, 0, len(cfgs))
	byName := make(map[string]*Backend, len(cfgs))
	for _, c := range cfgs {
		b := fresh[c.Name]
		if b == nil {
			b = m.byName[c.Name]
		} else {
			g := &b.gate
			g.held = false
			if g.set && g.present {
				updates = append(updates, g.pending)
			} else {
				removes = append(removes, c.Name) // a replaced backend's old inventory
				down = append(down, c.Name)
			}
			g.pending = aggregator.Inventory{}
		}
		list = append(list, b)
		byName[c.Name] = b
	}
	m.list, m.byName = list, byName
	m.mu.Unlock()
	m.setForwarding(cfgs, list)
	m.agg.Replace(p, updates, removes)
	return down
}

// retire drains b in the background (after Timing.RetireGrace, its calls
// in flight finish or reach its timeout), then closes its backend sessions
// and stops its supervisor.
func (m *Manager) retire(b *Backend) {
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		grace := time.NewTimer(b.timing.RetireGrace)
		select {
		case <-grace.C:
		case <-m.ctx.Done():
			grace.Stop()
		}
		if !b.drain(m.ctx, b.Timeout()) {
			b.log.Warn("reload: backend retired with calls still in flight", "timeout", b.Timeout())
		}
		b.closeSessions()
		if b.stop != nil {
			b.stop()
		}
		b.log.Info("reload: backend retired")
	}()
}

// flight counts a backend's requests in flight (Enter), so a retired
// backend drains before its sessions close.
type flight struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed when n reaches 0 (nil: nobody waits)
}

// Enter counts one request to b in flight until the returned func is
// called (once; later calls do nothing). The call core enters every
// backend request it runs.
func (b *Backend) Enter() (leave func()) {
	f := &b.flight
	f.mu.Lock()
	f.n++
	f.mu.Unlock()
	t := &ticket{f: f}
	return t.leave
}

// ticket is one request Enter counted; leave uncounts it once.
type ticket struct {
	f    *flight
	left atomic.Bool
}

func (t *ticket) leave() {
	if t.left.Swap(true) {
		return
	}
	f := t.f
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n--; f.n == 0 && f.idle != nil {
		close(f.idle)
		f.idle = nil
	}
}

// drain waits until b has no request in flight, for at most d or until ctx
// ends; it reports whether b drained.
func (b *Backend) drain(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	f := &b.flight
	for {
		f.mu.Lock()
		if f.n == 0 {
			f.mu.Unlock()
			return true
		}
		if f.idle == nil {
			f.idle = make(chan struct{})
		}
		idle := f.idle
		f.mu.Unlock()
		select {
		case <-idle:
		case <-t.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

// sessions are the backend sessions opened on a backend (Open: client
// sessions' and parked calls'), closed when it is retired.
type sessions struct {
	mu     sync.Mutex
	open   map[*mcp.ClientSession]struct{}
	closed bool // retired: sessions opened from now on close at once
}

// track records cs, opened on b, until it closes; on a retired backend it
// closes cs at once and reports false.
func (b *Backend) track(cs *mcp.ClientSession) bool {
	s := &b.sessions
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		_ = cs.Close()
		return false
	}
	if s.open == nil {
		s.open = map[*mcp.ClientSession]struct{}{}
	}
	s.open[cs] = struct{}{}
	s.mu.Unlock()
	go func() { // ends when cs closes
		_ = cs.Wait()
		s.mu.Lock()
		delete(s.open, cs)
		s.mu.Unlock()
	}()
	return true
}

// closeSessions closes every backend session opened on b, and any opened
// later.
func (b *Backend) closeSessions() {
	s := &b.sessions
	s.mu.Lock()
	s.closed = true
	open := s.open
	s.open = nil
	s.mu.Unlock()
	for cs := range open {
		if err := cs.Close(); err != nil {
			b.log.Debug("reload: closing a retired backend's session", "error", err)
		}
	}
}
