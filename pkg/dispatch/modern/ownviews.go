package modern

import (
	"slices"

	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/identity"
)

// ownerChanged queues, on the listen streams of c.Owner only, one
// list_changed per kind of its own view that changed (a per-principal
// backend's inventory: aggregator.OnOwnerChange); resource templates
// count as resources. Under a policy, with the owner's catalogue from
// before the change known, only kinds whose view differs are told (as
// catalogueChanged does for shared swaps).
func (d *Dispatcher) ownerChanged(c aggregator.OwnerChange) {
	tools := slices.Contains(c.Kinds, aggregator.KindTools)
	prompts := slices.Contains(c.Kinds, aggregator.KindPrompts)
	resources := slices.Contains(c.Kinds, aggregator.KindResources) || slices.Contains(c.Kinds, aggregator.KindTemplates)
	var cur *aggregator.Catalogue
	if d.opts.Policy != nil && c.Old != nil {
		cur = d.agg.For(c.Owner) // outside the registry's lock
	}
	d.subs.ListChangedFor(func(p identity.Principal) (bool, bool, bool) {
		if p.Key() != c.Owner {
			return false, false, false
		}
		if cur == nil {
			return tools, prompts, resources
		}
		t, pr, r := d.opts.Policy.Changed(p, c.Old, cur)
		return tools && t, prompts && pr, resources && r
	})
}
