package toolsearch

import "slices"

// A tool found for a request makes the other tools of its server likelier
// to be wanted too (a request needs a server's tools together: geocode an
// address, then find what is near it). In a request of several parts,
// the best siblingDepth fused hits (at least as many as asked for) are
// re-scored: each gains siblingWeight times the best score among them of a
// tool of its backend. Both were chosen on the tuning half of
// LiveMCPBench's tasks (eval_test.go); a single-intent request is left as
// it is (the held-out queries lose by it).
const (
	siblingWeight = 0.2
	siblingDepth  = FuseDepth
)

// siblings re-scores hits (allowed, best first; see above) and returns the
// limit best. Only allowed hits count, so a tool a principal may not use
// never lifts another.
func (ix *Index) siblings(hits []Hit, limit int) []Hit {
	best := make(map[int32]float64, len(hits))
	for _, h := range hits {
		b := ix.backend[h.Doc]
		best[b] = max(best[b], h.Score)
	}
	for i := range hits {
		hits[i].Score += siblingWeight * best[ix.backend[hits[i].Doc]]
	}
	slices.SortStableFunc(hits, func(a, b Hit) int {
		switch {
		case better(a, b):
			return -1
		case better(b, a):
			return 1
		}
		return 0
	})
	return hits[:min(limit, len(hits))]
}
