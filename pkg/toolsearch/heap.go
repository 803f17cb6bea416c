package toolsearch

// hitHeap is a min-heap of hits by better (its root is the worst kept),
// typed so that pushing a hit allocates nothing.
type hitHeap []Hit

// better orders hits: higher score first, then lower Doc.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Doc < b.Doc
}

// offer keeps hit if it is among the limit best offered so far.
func (h *hitHeap) offer(hit Hit, limit int) {
	if len(*h) == limit {
		if !better(hit, (*h)[0]) {
			return
		}
		(*h)[0] = hit
		h.down(0)
		return
	}
	*h = append(*h, hit)
	h.up(len(*h) - 1)
}

func (h hitHeap) up(i int) {
	for i > 0 {
		p := (i - 1) / 2
		if !better(h[p], h[i]) {
			return
		}
		h[p], h[i] = h[i], h[p]
		i = p
	}
}

func (h hitHeap) down(i int) {
	for {
		worst, l, r := i, 2*i+1, 2*i+2
		if l < len(h) && better(h[worst], h[l]) {
			worst = l
		}
		if r < len(h) && better(h[worst], h[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}

// drain returns the kept hits in a new slice, best first, emptying h.
func (h *hitHeap) drain() []Hit {
	out := make([]Hit, len(*h))
	for i := len(out) - 1; i >= 0; i-- {
		out[i] = (*h)[0]
		last := len(*h) - 1
		(*h)[0] = (*h)[last]
		*h = (*h)[:last]
		h.down(0)
	}
	return out
}
