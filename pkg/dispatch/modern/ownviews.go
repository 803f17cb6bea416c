package modern

import (
	"slices"

	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/identity"
)

// ownerChanged queues, on the listen streams of c.Owner only, one
// list_changed per kind of its own view that changed (a per-principal
// backend's inventory: aggregator.OnOwnerChange); resource templates
// count as resources. Shared catalogue swaps are catalogueChanged's.
func (d *Dispatcher) ownerChanged(c aggregator.OwnerChange) {
	tools := slices.Contains(c.Kinds, aggregator.KindTools)
	prompts := slices.Contains(c.Kinds, aggregator.KindPrompts)
	resources := slices.Contains(c.Kinds, aggregator.KindResources) || slices.Contains(c.Kinds, aggregator.KindTemplates)
	d.subs.ListChangedFor(func(p identity.Principal) (bool, bool, bool) {
		if p.Key() != c.Owner {
			return false, false, false
		}
		return tools, prompts, resources
	})
}
