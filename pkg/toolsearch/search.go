package toolsearch

import (
	"container/heap"
	"sync"
)

// synonymWeight is how much a synonym of a query word counts next to the
// word itself.
const synonymWeight = 0.5

// The weights of WordNet's synonyms of a query word (its most frequent
// sense's other words) and hypernyms ("dinner" → "meal"): below the hand
// table's, since WordNet's senses are general English, not software's.
const (
	wordnetSynonymWeight  = 0.2
	wordnetHypernymWeight = 0.1
)

// Search returns up to limit hits for query, best first (ties by Doc
// order), among the documents allow accepts (nil allows all). A request of
// several parts ("read the sheet, plot a chart and save it") is ranked as a
// whole and part by part, the rankings fused (reciprocal rank), so each part
// finds its tool. A query with no indexed word returns no hits.
func (ix *Index) Search(query string, limit int, allow func(doc int) bool) []Hit {
	if limit <= 0 || len(ix.keys) == 0 {
		return nil
	}
	query = literals(query)
	parts := clauses(query)
	if len(parts) <= 1 {
		return ix.rank(queryTerms(query), limit, allow)
	}
	depth := max(limit, FuseDepth)
	lists := [][]Hit{ix.rank(queryTerms(query), depth, allow)}
	for _, p := range parts {
		lists = append(lists, ix.rank(queryTerms(p), depth, allow))
	}
	return Fuse(lists, limit)
}

// FuseDepth is how many hits of each ranking are fused; fuseK is reciprocal
// rank fusion's constant (smaller favours each ranking's first hits more).
const (
	FuseDepth = 20
	fuseK     = 5.0
)

// Fuse merges rankings of one index's documents by reciprocal rank,
// Σ 1/(fuseK + rank) over the lists, and returns the limit best (ties by
// Doc); each list should hold its first FuseDepth hits at least.
func Fuse(lists [][]Hit, limit int) []Hit {
	score := map[int]float64{}
	keys := map[int]string{}
	for _, l := range lists {
		for r, h := range l {
			score[h.Doc] += 1 / (fuseK + float64(r+1))
			keys[h.Doc] = h.Key
		}
	}
	h := make(hitHeap, 0, limit+1)
	for d, s := range score {
		heap.Push(&h, Hit{Doc: d, Key: keys[d], Score: s})
		if len(h) > limit {
			heap.Pop(&h)
		}
	}
	return drain(h)
}

// rank scores the documents for weighted terms and returns the limit best
// allowed ones.
func (ix *Index) rank(ts []string, limit int, allow func(int) bool) []Hit {
	acc := getScores(len(ix.keys))
	defer putScores(acc)
	for t, w := range expand(ts) {
		id, ok := ix.vocab[t]
		if !ok {
			continue
		}
		ps := ix.postings[id]
		s := w * ix.idf[id]
		for _, p := range ps {
			if acc.v[p.doc] == 0 {
				acc.touched = append(acc.touched, p.doc)
			}
			acc.v[p.doc] += s * float64(p.part)
		}
	}
	return ix.top(acc, limit, allow)
}

// expand weighs the query's terms: each distinct term 1, and each synonym
// not in the query synonymWeight.
func expand(ts []string) map[string]float64 {
	q := make(map[string]float64, len(ts)*2)
	for _, t := range ts {
		q[t] = 1
	}
	for _, t := range ts {
		for _, e := range expansions()[t] {
			if w, ok := q[e.term]; !ok || w < e.weight {
				q[e.term] = e.weight
			}
		}
	}
	return q
}

// top selects the limit best allowed documents with a min-heap.
func (ix *Index) top(acc *scores, limit int, allow func(int) bool) []Hit {
	h := make(hitHeap, 0, limit+1)
	for _, d := range acc.touched {
		doc := int(d)
		hit := Hit{Doc: doc, Key: ix.keys[doc], Score: acc.v[d]}
		if len(h) == limit && !better(hit, h[0]) {
			continue
		}
		if allow != nil && !allow(doc) {
			continue
		}
		heap.Push(&h, hit)
		if len(h) > limit {
			heap.Pop(&h)
		}
	}
	return drain(h)
}

// drain empties a heap into a slice, best first.
func drain(h hitHeap) []Hit {
	out := make([]Hit, len(h))
	for i := len(h) - 1; i >= 0; i-- {
		out[i] = heap.Pop(&h).(Hit)
	}
	return out
}

// better orders hits: higher score first, then lower Doc.
func better(a, b Hit) bool {
	if a.Score != b.Score {
		return a.Score > b.Score
	}
	return a.Doc < b.Doc
}

// hitHeap is a min-heap of hits by better (its root is the worst kept).
type hitHeap []Hit

func (h hitHeap) Len() int           { return len(h) }
func (h hitHeap) Less(i, j int) bool { return better(h[j], h[i]) }
func (h hitHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)        { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// scores is a search's accumulator: a score per document and the documents
// touched, pooled so a search allocates no per-document array.
type scores struct {
	v       []float64
	touched []int32
}

var scorePool sync.Pool

func getScores(n int) *scores {
	s, _ := scorePool.Get().(*scores)
	if s == nil || cap(s.v) < n {
		return &scores{v: make([]float64, n)}
	}
	s.v = s.v[:n]
	return s
}

func putScores(s *scores) {
	for _, d := range s.touched {
		s.v[d] = 0
	}
	s.touched = s.touched[:0]
	scorePool.Put(s)
}
