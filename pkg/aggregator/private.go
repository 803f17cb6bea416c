package aggregator

import (
	"maps"
	"slices"
	"time"
)

// Per-principal inventories: a backend that takes each user's credential
// is listed per principal (pkg/backends, perprincipal.go), and what it
// offers one principal is that principal's alone. For(owner) is the
// catalogue owner sees: the shared inventories and owner's own, merged by
// the same conflict resolution into one catalogue with one routing table,
// so lists, routing and views read it as they read Current.

// privateTTL is how long an owner's inventories outlive their last use.
const privateTTL = time.Hour

// private is one owner's own inventories and the catalogue built with them.
type private struct {
	inv  map[string]Inventory // by backend, admitted by the gate
	raw  map[string]Inventory // by backend, as offered (gate.go)
	base *Catalogue           // the shared catalogue cat was built over
	cat  *Catalogue           // nil: to be built
	used time.Time
}

// UpdateFor replaces backend inv.Backend's inventory as owner (a
// principal's key, never "") sees it. A tool the MCP server registry
// would refuse is withheld, as in Update.
func (a *Aggregator) UpdateFor(owner string, inv Inventory) {
	if owner == "" {
		return
	}
	inv, refused := refuseInvalid(inv)
	for _, w := range refused {
		a.log.Warn("aggregator: tool withheld; the MCP server registry refuses it",
			"backend", w.Backend, "tool", w.Name, "reason", w.Reason)
	}
	announced := inv.Announced
	inv.Announced = nil
	g, _ := a.gateNow()
	gated := a.admitFor(g, owner, inv)
	now := time.Now()
	a.pmu.Lock()
	changed := a.putFor(owner, inv, gated, now, announced)
	a.pmu.Unlock()
	a.notifyOwners(changed)
}

// putFor stores owner's inventory inv (gated: as the gate admitted it)
// and returns the change of owner's view (a.pmu held).
func (a *Aggregator) putFor(owner string, inv, gated Inventory, now time.Time, announced []Kind) []OwnerChange {
	for k, p := range a.priv {
		if now.Sub(p.used) > privateTTL {
			delete(a.priv, k)
		}
	}
	p := a.priv[owner]
	if p == nil {
		p = &private{inv: map[string]Inventory{}, raw: map[string]Inventory{}}
		a.priv[owner] = p
	}
	old, had := p.inv[inv.Backend]
	oldCat := a.built(p)
	p.inv[inv.Backend], p.raw[inv.Backend] = gated, inv
	p.cat, p.used = nil, now
	return withOld(ownerChange(owner, old, had, gated, true, announced), oldCat)
}

// RemoveFor drops owner's own inventory of backend.
func (a *Aggregator) RemoveFor(owner, backend string) {
	a.pmu.Lock()
	var changed []OwnerChange
	if p := a.priv[owner]; p != nil {
		if old, ok := p.inv[backend]; ok {
			changed = withOld(ownerChange(owner, old, true, Inventory{}, false, nil), a.built(p))
			delete(p.inv, backend)
			delete(p.raw, backend)
			p.cat = nil
		}
	}
	a.pmu.Unlock()
	a.notifyOwners(changed)
}

// forgetPrivate drops every owner's own inventories of backends (removed
// by a reload) and returns the owners' changes, for notifyOwners once a.mu
// is released. Requires a.mu (the lock order: a.mu, then a.pmu).
func (a *Aggregator) forgetPrivate(backends []string) []OwnerChange {
	a.pmu.Lock()
	defer a.pmu.Unlock()
	var changed []OwnerChange
	for owner, p := range a.priv {
		for _, b := range backends {
			if old, ok := p.inv[b]; ok {
				changed = append(changed, withOld(ownerChange(owner, old, true, Inventory{}, false, nil), a.built(p))...)
				delete(p.inv, b)
				delete(p.raw, b)
				p.cat = nil
			}
		}
	}
	return changed
}

// For returns the catalogue owner sees: Current merged with owner's own
// inventories (Current itself when owner has none). It is never nil. Do
// not call it from an OnChange listener.
func (a *Aggregator) For(owner string) *Catalogue {
	cur := a.cur.Load()
	if owner == "" {
		return cur
	}
	a.pmu.Lock()
	p := a.priv[owner]
	if p == nil || len(p.inv) == 0 {
		a.pmu.Unlock()
		return cur
	}
	p.used = time.Now()
	if p.cat != nil && p.base == cur {
		c := p.cat
		a.pmu.Unlock()
		return c
	}
	a.pmu.Unlock()
	return a.buildFor(owner)
}

// buildFor builds owner's catalogue over the current shared inventories
// (a.mu, then a.pmu: the lock order).
func (a *Aggregator) buildFor(owner string) *Catalogue {
	a.mu.Lock()
	defer a.mu.Unlock()
	cur := a.cur.Load()
	a.pmu.Lock()
	defer a.pmu.Unlock()
	p := a.priv[owner]
	if p == nil || len(p.inv) == 0 {
		return cur
	}
	if p.cat != nil && p.base == cur {
		return p.cat
	}
	all := slices.Collect(maps.Values(a.inv))
	for backend, inv := range p.inv {
		if _, shared := a.inv[backend]; !shared {
			all = append(all, inv)
		}
	}
	cat, _, err := Build(a.policy, all)
	if err != nil {
		a.log.Debug("aggregator: a principal's catalogue withholds colliding names", "err", err)
	}
	if cat == nil {
		cat = cur
	}
	p.base, p.cat = cur, cat
	return cat
}
