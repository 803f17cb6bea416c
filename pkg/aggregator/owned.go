package aggregator

import (
	"bytes"
	"encoding/json"
	"slices"
)

// A principal's own inventories (private.go) change without any shared
// catalogue swap, so OnChange listeners never heard of them: the
// principal's clients kept lists that no longer matched their view. Every
// change of an owner's own inventories (a re-listing that finds a
// difference, a backend's list_changed on the principal's session, a
// failed listing withdrawing it, an accept re-admitting a pinned tool, a
// reload removing the backend) now reaches OnOwnerChange listeners with
// the owner and the kinds that changed.

// OwnerChange is one change of an owner's own view: Owner is the
// principal's key (identity.Principal.Key), Kinds the lists that changed
// (never empty), Old the owner's catalogue before it when one was built
// (nil: none, every kind counts as changed).
type OwnerChange struct {
	Owner string
	Kinds []Kind
	Old   *Catalogue
}

// OnOwnerChange registers f, called after each change of an owner's own
// inventories, outside the aggregator's locks (f may call For). Register
// listeners before the first UpdateFor; f must not call UpdateFor,
// RemoveFor or Regate.
func (a *Aggregator) OnOwnerChange(f func(OwnerChange)) {
	a.pmu.Lock()
	defer a.pmu.Unlock()
	a.ownerListeners = append(a.ownerListeners, f)
}

// notifyOwners calls the OnOwnerChange listeners with changes (no lock held).
func (a *Aggregator) notifyOwners(changes []OwnerChange) {
	if len(changes) == 0 {
		return
	}
	a.pmu.Lock()
	ls := slices.Clone(a.ownerListeners)
	a.pmu.Unlock()
	for _, c := range changes {
		for _, f := range ls {
			f(c)
		}
	}
}

// ChangedKinds are the kinds whose lists differ between old and cur, two
// listings of one backend (compared by their JSON).
func ChangedKinds(old, cur Inventory) []Kind { return inventoryKinds(old, cur, nil) }

// inventoryKinds are the kinds whose lists differ between old and cur (one
// backend's inventories; either may be absent: the zero Inventory), by
// their JSON, plus the announced ones.
func inventoryKinds(old, cur Inventory, announced []Kind) []Kind {
	var out []Kind
	for _, k := range []Kind{KindTools, KindPrompts, KindResources, KindTemplates} {
		if slices.Contains(announced, k) || !sameJSON(items(old, k), items(cur, k)) {
			out = append(out, k)
		}
	}
	return out
}

// items is inv's list of kind k.
func items(inv Inventory, k Kind) any {
	switch k {
	case KindTools:
		return inv.Tools
	case KindPrompts:
		return inv.Prompts
	case KindResources:
		return inv.Resources
	default:
		return inv.Templates
	}
}

// sameJSON reports whether two lists encode alike (an empty list and none
// are alike; a list that does not encode differs).
func sameJSON(x, y any) bool {
	bx, ex := json.Marshal(x)
	by, ey := json.Marshal(y)
	if ex != nil || ey != nil {
		return false
	}
	norm := func(b []byte) []byte {
		if string(b) == "null" {
			return []byte("[]")
		}
		return b
	}
	return bytes.Equal(norm(bx), norm(by))
}

// built is p's catalogue if it was built over the current shared one
// (nil otherwise; a.pmu held).
func (a *Aggregator) built(p *private) *Catalogue {
	if p == nil || p.cat == nil || p.base != a.cur.Load() {
		return nil
	}
	return p.cat
}

// withOld is cs with Old set to old.
func withOld(cs []OwnerChange, old *Catalogue) []OwnerChange {
	for i := range cs {
		cs[i].Old = old
	}
	return cs
}

// ownerChange is the change of owner's inventory of one backend from old
// (had: it was there) to cur (has), or nil when nothing changed.
func ownerChange(owner string, old Inventory, had bool, cur Inventory, has bool, announced []Kind) []OwnerChange {
	if !had && !has {
		return nil
	}
	kinds := inventoryKinds(old, cur, announced)
	if len(kinds) == 0 {
		return nil
	}
	return []OwnerChange{{Owner: owner, Kinds: kinds}}
}
