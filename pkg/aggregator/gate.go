package aggregator

import (
	"maps"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Gate decides which of a backend's tools enter the catalogue (tool
// pinning, pkg/pin): a tool it leaves out is unknown to lists and calls.
// Admit may do bounded I/O; it must not call the Aggregator.
type Gate interface {
	Admit(backend string, tools []*mcp.Tool) []*mcp.Tool
}

// OwnerGate is a Gate that decides a principal's own inventories
// (UpdateFor) apart from every other principal's: AdmitFor gets the
// owner's key (identity.Principal.Key). A Gate without it admits them
// with Admit.
type OwnerGate interface {
	Gate
	AdmitFor(backend, owner string, tools []*mcp.Tool) []*mcp.Tool
}

// admitFor returns owner's inventory inv with its tools filtered by the
// gate, if any.
func (a *Aggregator) admitFor(g Gate, owner string, inv Inventory) Inventory {
	if og, ok := g.(OwnerGate); ok && len(inv.Tools) > 0 {
		inv.Tools = og.AdmitFor(inv.Backend, owner, inv.Tools)
		return inv
	}
	return a.admit(g, inv)
}

// SetGate makes g admit every inventory's tools from now on (call it
// before the first Update; nil: every tool enters).
func (a *Aggregator) SetGate(g Gate) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gate = g
}

// admit returns inv with its tools filtered by the gate, if any.
func (a *Aggregator) admit(g Gate, inv Inventory) Inventory {
	if g != nil && len(inv.Tools) > 0 {
		inv.Tools = g.Admit(inv.Backend, inv.Tools)
	}
	return inv
}

// gateNow is the current gate and the count of Regate calls so far (an
// inventory admitted before a Regate is admitted again).
func (a *Aggregator) gateNow() (Gate, uint64) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.gate, a.gateGen
}

// Regate admits every current inventory again (the gate's decisions
// changed: a tool change accepted) and rebuilds once; clients get
// list_changed if their lists changed. Principals' own inventories are
// admitted again too; their catalogues are rebuilt on next use.
func (a *Aggregator) Regate() {
	a.notifyOwners(a.regate())
}

// regate is Regate under a.mu; it returns the owners' changes.
func (a *Aggregator) regate() []OwnerChange {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.gate == nil {
		return nil
	}
	a.gateGen++
	for _, b := range slices.Sorted(maps.Keys(a.raw)) {
		a.inv[b] = a.admit(a.gate, a.raw[b])
	}
	var changed []OwnerChange
	a.pmu.Lock()
	for owner, p := range a.priv {
		oldCat := a.built(p)
		for b, raw := range p.raw {
			old := p.inv[b]
			p.inv[b] = a.admitFor(a.gate, owner, raw)
			changed = append(changed, withOld(ownerChange(owner, old, true, p.inv[b], true, nil), oldCat)...)
		}
		p.cat = nil
	}
	a.pmu.Unlock()
	a.rebuild(nil)
	return changed
}
