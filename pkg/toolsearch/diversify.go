package toolsearch

// In a request of several parts, the fused ranking can give every place
// after the first few to one part's near-identical tools (five stock-price
// tools for "get the prices, then compute the market cap") and none to
// another part's. Past the first keepFirst fused hits, the hits are taken
// greedily as xQuAD diversification does (Santos et al., WWW 2010): each
// next hit maximises (1-diversityWeight)·its score over the first hit's +
// diversityWeight·Σ over the parts of its share of the part (its score in
// the part's ranking over that ranking's best, squared) times how much of
// the part the hits already taken leave unserved, averaged over the parts.
// Chosen on the tuning half of LiveMCPBench's tasks and kept because the
// held-out half gained too (eval_test.go); single-intent requests are not
// diversified.
const (
	keepFirst       = 3
	diversityWeight = 0.7
)

// diversify returns hits (best first, fused) re-ordered as above for the
// parts' rankings (each best first), each part's share weighted by its
// weight in ws (partWeights); only its first limit places change.
func diversify(hits []Hit, parts [][]Hit, ws []float64, limit int) []Hit {
	if len(hits) <= keepFirst || len(parts) == 0 {
		return hits
	}
	share := shares(hits, parts)
	unserved := make([]float64, len(parts))
	for a := range unserved {
		unserved[a] = 1
	}
	top, total := hits[0].Score, 0.0
	for _, w := range ws {
		total += w
	}
	for n := 0; n < min(limit, len(hits)); n++ {
		best, bestV := n, 0.0
		for i := n; i < len(hits); i++ {
			v := 0.0
			for a := range parts {
				v += ws[a] * share[i][a] * unserved[a]
			}
			v = (1-diversityWeight)*hits[i].Score/top + diversityWeight*v/total
			if n < keepFirst {
				v = hits[i].Score // the fused ranking's first hits keep their places
			}
			if i == n || v > bestV {
				best, bestV = i, v
			}
		}
		// move hits[best] (and its shares) to place n, the rest keeping their order
		h, s := hits[best], share[best]
		copy(hits[n+1:best+1], hits[n:best])
		copy(share[n+1:best+1], share[n:best])
		hits[n], share[n] = h, s
		for a := range parts {
			unserved[a] *= 1 - s[a]
		}
	}
	return hits
}

// shares are each hit's share of each part: its score in the part's
// ranking over the ranking's best, squared (0 when it is not ranked there).
func shares(hits []Hit, parts [][]Hit) [][]float64 {
	share := make([][]float64, len(hits))
	for i := range share {
		share[i] = make([]float64, len(parts))
	}
	for a, l := range parts {
		if len(l) == 0 || l[0].Score <= 0 {
			continue
		}
		for _, ph := range l {
			for i := range hits {
				if hits[i].Doc == ph.Doc {
					r := ph.Score / l[0].Score
					share[i][a] = r * r
				}
			}
		}
	}
	return share
}
