package pin

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"
)

// MaxDroppedPins bounds the pins each backend keeps of tools it no longer
// offers: past it the oldest dropped ones are deleted (counted as
// evicted, logged: a backend churning names to push a pin out is seen).
const MaxDroppedPins = 10_000

// refreshEvery is how often Pins tells the store which backends are live
// (their pins' retention and Redis TTLs refreshed): well within the least
// security.pin_retention (1h).
const refreshEvery = 15 * time.Minute

// Outcomes of retention, counted in Options.Counter too.
const (
	OutcomeExpired = "expired" // a pin deleted: its tool or backend gone for security.pin_retention
	OutcomeEvicted = "evicted" // a dropped tool's pin deleted over MaxDroppedPins
)

// Retained is what one Retain deleted.
type Retained struct {
	Expired int // pins of tools not offered within keep
	Evicted int // pins of dropped tools over the bound, oldest first
	// Removed are the pins deleted of other backends not retained within
	// keep, by backend (Memory; Redis lets their keys expire).
	Removed map[string]int
}

// Retainer is a Store that deletes pins nobody needs any more (Memory
// and Redis are). Retain records that backend offers the tools live at
// now, deletes its pins of tools not offered within keep and, of the
// others not offered now, the oldest beyond maxDropped; a backend not
// retained within keep loses all its pins (a removed backend). A pin
// written but not yet retained counts as offered at its first Retain.
type Retainer interface {
	Retain(ctx context.Context, backend string, live []string, now time.Time, keep time.Duration, maxDropped int) (Retained, error)
}

// retain tells the store that backend offers live now (p.obs held),
// counting and logging what it deleted.
func (p *Pins) retain(backend string, live []string) {
	r, ok := p.opts.Store.(Retainer)
	if !ok {
		return
	}
	p.mu.Lock()
	keep := p.keep
	p.live[backend] = live
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	got, err := r.Retain(ctx, backend, live, p.now(), keep, cmp.Or(p.opts.MaxDropped, MaxDroppedPins))
	k := key{backend: backend}
	switch {
	case err != nil:
		p.count(backend, OutcomeStoreError)
		p.warn("tool pin store failed to retain the backend's pins", k, "error", err)
		return
	case got.Evicted > 0:
		p.warn("pins of dropped tools evicted over the bound", k, "evicted", got.Evicted)
	}
	p.countN(backend, OutcomeExpired, got.Expired)
	for b, n := range got.Removed {
		p.countN(b, OutcomeExpired, n)
	}
	p.countN(backend, OutcomeEvicted, got.Evicted)
}

// refresh retains every live backend's pins (the ticker's work, so a
// backend whose listing does not change keeps its pins past keep).
func (p *Pins) refresh() {
	p.obs.Lock()
	defer p.obs.Unlock()
	p.mu.Lock()
	live := maps.Clone(p.live)
	p.mu.Unlock()
	for _, b := range slices.Sorted(maps.Keys(live)) {
		p.retain(b, live[b])
	}
}

// refreshing runs refresh every refreshEvery until quit is closed.
func (p *Pins) refreshing(quit <-chan struct{}, done chan<- struct{}) {
	defer close(done)
	t := time.NewTicker(refreshEvery)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case <-t.C:
			p.refresh()
		}
	}
}

func (p *Pins) now() time.Time {
	if p.opts.Now != nil {
		return p.opts.Now()
	}
	return time.Now()
}

func (p *Pins) countN(backend, outcome string, n int) {
	if p.opts.Counter != nil && n > 0 {
		p.opts.Counter.WithLabelValues(backend, outcome).Add(float64(n))
	}
}
