package aggregator

import (
	"bytes"
	"cmp"
	"encoding/json"
	"log/slog"
	"maps"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/vmcp/vmcp/pkg/bulkgc"
)

// Aggregator holds the current Catalogue and rebuilds it when a backend's
// inventory changes. Current is lock-free; Update and Remove are serialized.
type Aggregator struct {
	policy Policy
	log    *slog.Logger
	cur    atomic.Pointer[Catalogue]
	ver    atomic.Uint64

	mu        sync.Mutex // serializes Update, Remove and OnChange
	inv       map[string]Inventory
	listeners []func(old, new *Catalogue, kinds []Kind)
	lastErr   error
	conflicts map[Conflict]bool // reported by the last successful build
	withheld  map[string][]Withheld
	gate      Gate                 // nil: every tool enters (gate.go)
	raw       map[string]Inventory // inventories as offered, before the gate
	gateGen   uint64               // Regate calls so far

	pmu  sync.Mutex          // guards priv; taken after mu when both are held
	priv map[string]*private // per-principal inventories by owner (private.go)
	// ownerListeners hear of changes of owners' own inventories (owned.go; under pmu)
	ownerListeners []func(OwnerChange)

	bulk *bulkgc.Limiter // the server's bulk phases (nil: none)
}

// New returns an Aggregator whose Current is Empty until the first Update.
// A nil logger discards logs.
func New(p Policy, log *slog.Logger) *Aggregator {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	a := &Aggregator{policy: p, log: log, inv: map[string]Inventory{}, raw: map[string]Inventory{}, withheld: map[string][]Withheld{}, priv: map[string]*private{}}
	a.cur.Store(Empty())
	return a
}

// WithBulkGC makes a's rebuilds bulk phases of l (nil: none) and returns
// a; call it before the first Update.
func (a *Aggregator) WithBulkGC(l *bulkgc.Limiter) *Aggregator {
	a.bulk = l
	return a
}

// Current returns the current catalogue; it is never nil.
func (a *Aggregator) Current() *Catalogue { return a.cur.Load() }

// Version counts catalogue swaps; it is 0 before the first successful build.
func (a *Aggregator) Version() uint64 { return a.ver.Load() }

// LastError returns the error of the last rebuild, or nil if it succeeded.
// After a failed rebuild the previous catalogue stays current.
func (a *Aggregator) LastError() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.lastErr
}

// Conflicts returns the resource, template and duplicate-item conflicts
// the last successful build resolved by order (see Conflict), sorted by
// kind, key, winner and loser. Tool and prompt names withheld for colliding
// are named in LastError instead.
func (a *Aggregator) Conflicts() []Conflict {
	a.mu.Lock()
	out := slices.Collect(maps.Keys(a.conflicts))
	a.mu.Unlock()
	slices.SortFunc(out, func(x, y Conflict) int {
		return cmp.Or(cmp.Compare(x.Kind, y.Kind), cmp.Compare(x.Key, y.Key),
			cmp.Compare(x.Winner, y.Winner), cmp.Compare(x.Loser, y.Loser))
	})
	return out
}

// OnChange registers f, called synchronously after each catalogue swap with
// the kinds whose advertised lists changed (never empty); a swap that only
// re-routes (e.g. a URI's winner) bumps Version without calling f. Register
// listeners before the first Update; f must not call Update or Remove.
func (a *Aggregator) OnChange(f func(old, new *Catalogue, kinds []Kind)) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.listeners = append(a.listeners, f)
}

// Update replaces one backend's inventory and rebuilds the catalogue. A
// tool the go-sdk server registry would refuse is withheld, with a warning
// naming the backend and the tool (refuseInvalid).
func (a *Aggregator) Update(inv Inventory) {
	ph := a.bulk.Phase() // checking and encoding each tool: garbage per tool
	defer ph.End()
	ph.Add(len(inv.Tools))
	inv, refused := refuseInvalid(inv)
	for _, w := range refused {
		a.log.Warn("aggregator: tool withheld; the MCP server registry refuses it",
			"backend", w.Backend, "tool", w.Name, "reason", w.Reason)
	}
	announced := inv.Announced
	inv.Announced = nil
	g, gen := a.gateNow()
	gated := a.admit(g, inv)
	a.mu.Lock()
	defer a.mu.Unlock()
	if gen != a.gateGen { // Regate ran meanwhile: decide again
		gated = a.admit(a.gate, inv)
	}
	a.raw[inv.Backend], a.inv[inv.Backend] = inv, gated
	a.withheld[inv.Backend] = refused
	a.rebuild(announced)
}

// Replace applies a reload in one rebuild (listeners are called at most
// once): the aggregation policy p, the inventories of added or replaced
// backends, and the removal of the backends named in removes.
func (a *Aggregator) Replace(p Policy, updates []Inventory, removes []string) {
	var owned []OwnerChange                  // the owners whose inventories of removed backends went
	defer func() { a.notifyOwners(owned) }() // after a.mu is released
	checked := make([]Inventory, 0, len(updates))
	refused := make([][]Withheld, 0, len(updates))
	for _, inv := range updates {
		inv, r := refuseInvalid(inv)
		for _, w := range r {
			a.log.Warn("aggregator: tool withheld; the MCP server registry refuses it",
				"backend", w.Backend, "tool", w.Name, "reason", w.Reason)
		}
		checked, refused = append(checked, inv), append(refused, r)
	}
	g, gen := a.gateNow()
	gated := make([]Inventory, len(checked))
	for i, inv := range checked {
		gated[i] = a.admit(g, inv)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for i, inv := range checked {
		if gen != a.gateGen { // Regate ran meanwhile: decide again
			gated[i] = a.admit(a.gate, inv)
		}
	}
	a.policy = p
	for _, name := range removes {
		delete(a.inv, name)
		delete(a.raw, name)
		delete(a.withheld, name)
	}
	owned = a.forgetPrivate(removes)
	var announced []Kind
	for i, inv := range checked {
		announced = append(announced, inv.Announced...)
		inv.Announced = nil
		gated[i].Announced = nil
		a.raw[inv.Backend], a.inv[inv.Backend] = inv, gated[i]
		a.withheld[inv.Backend] = refused[i]
	}
	a.rebuild(announced)
}

// Withheld lists the items of the current inventories kept out of the
// catalogue because the MCP server registry refuses them.
func (a *Aggregator) Withheld() []Withheld {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []Withheld
	for _, b := range slices.Sorted(maps.Keys(a.withheld)) {
		out = append(out, a.withheld[b]...)
	}
	return out
}

// Remove drops a backend (e.g. it went down) and rebuilds the catalogue.
func (a *Aggregator) Remove(backend string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if _, ok := a.inv[backend]; !ok {
		return
	}
	delete(a.inv, backend)
	delete(a.raw, backend)
	delete(a.withheld, backend)
	a.rebuild(nil)
}

// rebuild builds from a.inv and swaps it in if anything changed, or a
// backend announced a change of kinds in announced. a.mu is held.
func (a *Aggregator) rebuild(announced []Kind) {
	cat, conflicts, err := Build(a.policy, slices.Collect(maps.Values(a.inv)))
	a.lastErr = err
	if cat == nil {
		a.log.Warn("aggregator: rebuild failed, keeping previous catalogue", "err", err)
		return
	}
	if err != nil { // names withheld, whatever order the backends came in
		a.log.Warn("aggregator: colliding names withheld from the catalogue", "err", err)
	}
	a.logConflicts(conflicts)

	old := a.cur.Load()
	kinds := changedKinds(old, cat)
	for _, k := range announced {
		if !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
	}
	if len(kinds) == 0 && sameRoutes(old, cat) && maps.Equal(old.descs, cat.descs) {
		return
	}
	a.cur.Store(cat)
	a.ver.Add(1)
	if len(kinds) == 0 {
		return
	}
	for _, f := range a.listeners {
		f(old, cat, kinds)
	}
}

// logConflicts logs the conflicts not already reported by the last build.
func (a *Aggregator) logConflicts(cs []Conflict) {
	next := make(map[Conflict]bool, len(cs))
	for _, c := range cs {
		next[c] = true
		if a.conflicts[c] {
			continue
		}
		switch {
		case c.Winner == "":
			a.log.Info("aggregator: invalid resource template ignored",
				"template", c.Key, "backend", c.Loser)
		case c.Winner == c.Loser:
			a.log.Info("aggregator: duplicate item in backend list ignored",
				"kind", string(c.Kind), "key", c.Key, "backend", c.Winner)
		default:
			a.log.Info("aggregator: conflict resolved by order",
				"kind", string(c.Kind), "key", c.Key, "winner", c.Winner, "loser", c.Loser)
		}
	}
	a.conflicts = next
}

// changedKinds lists the kinds whose advertised lists differ in JSON.
func changedKinds(old, cur *Catalogue) []Kind {
	var kinds []Kind
	check := func(k Kind, x, y any) {
		if !jsonEqual(x, y) {
			kinds = append(kinds, k)
		}
	}
	check(KindTools, old.Tools, cur.Tools)
	if (old.ownOnly || cur.ownOnly) && (len(kinds) == 0 || kinds[0] != KindTools) {
		check(KindTools, old.Routable, cur.Routable) // what search and calls see changed
	}
	check(KindResources, old.Resources, cur.Resources)
	check(KindTemplates, old.Templates, cur.Templates)
	check(KindPrompts, old.Prompts, cur.Prompts)
	return kinds
}

func jsonEqual(x, y any) bool {
	bx, err1 := json.Marshal(x)
	by, err2 := json.Marshal(y)
	return err1 == nil && err2 == nil && bytes.Equal(bx, by)
}

// sameRoutes reports whether two catalogues route every name and URI alike.
func sameRoutes(x, y *Catalogue) bool {
	return maps.EqualFunc(x.tools, y.tools, func(a, b toolEntry) bool { return a.route == b.route }) &&
		maps.EqualFunc(x.prompts, y.prompts, func(a, b promptEntry) bool { return a.route == b.route }) &&
		maps.Equal(x.resources, y.resources) &&
		maps.Equal(x.templates, y.templates) &&
		slices.EqualFunc(x.matchers, y.matchers, func(a, b matcher) bool {
			return a.backend == b.backend && a.re.String() == b.re.String()
		})
}
