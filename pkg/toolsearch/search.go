package toolsearch

import (
	"slices"
	"strings"
	"sync"
	"unicode/utf8"
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

// wordnetDerivedWeight is the weight of the words WordNet relates to a
// query word by derivation ("analysis" ↔ "analyze", "comparison" ↔
// "compare"), which Snowball stems apart: a synonym's.
const wordnetDerivedWeight = 0.2

// maxQueryBytes bounds how much of a query is read: a request pasted with
// a document (one of LiveMCPBench's tasks is 18,686 characters) is ranked
// by its first 16 KiB.
const maxQueryBytes = 16 << 10

// cut is s's first n bytes at most, ending at a rune boundary.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// maxQueryTerms bounds the distinct terms, expansions included, one ranking
// scores, so a long request costs a bounded amount of work.
const maxQueryTerms = 96

// Search returns up to limit hits for query, best first (ties by Doc
// order), among the documents allow accepts (nil allows all). A request of
// several parts ("read the sheet, plot a chart and save it to ~/c.png") is
// ranked as a whole and part by part, the rankings fused (reciprocal rank)
// and then diversified over the parts (diversify.go), so each part finds
// its tool.
// Its first maxQueryBytes are read. Chat shorthand is read as the words it
// stands for (shorthand.go), and Chinese text with its English words
// (glossary.go). A query with no indexed word returns no hits.
func (ix *Index) Search(query string, limit int, allow func(doc int) bool) []Hit {
	if limit <= 0 || len(ix.keys) == 0 {
		return nil
	}
	query = glossed(spelledOut(cut(query, maxQueryBytes)))
	arith := arithmetic(strings.ToLower(query))
	steps, asides := implied(query, arith)
	want := limit + copiesDepth
	hits := ix.placeAsides(ix.ranked(operands(literals(query, arith)), steps, want, allow), asides, allow)
	return hits[:min(limit, len(hits))]
}

// ranked returns the want best hits for query (its literals replaced) and
// the steps it implies (see Search), another server's copies after.
func (ix *Index) ranked(query string, steps []string, want int, allow func(doc int) bool) []Hit {
	parts := append(clauses(query), steps...)
	if len(parts) == 1 {
		query = parts[0] // the request's one clause, or the one step it implies
	}
	if len(parts) <= 1 {
		return ix.distinct(ix.lift(ix.rank(queryTerms(query), want, allow), want, allow), want)
	}
	depth := max(want, FuseDepth)
	lists := [][]Hit{ix.rank(queryTerms(query), depth, allow)}
	for _, p := range parts {
		lists = append(lists, ix.rank(queryTerms(p), depth, allow))
	}
	pool := max(want, siblingDepth)
	hits := ix.siblings(Fuse(lists, pool), pool)
	return ix.distinct(ix.lift(diversify(hits, lists[1:], want), want, allow), want)
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
	var all []Hit
	for _, l := range lists {
		for r, h := range l {
			all = append(all, Hit{Doc: h.Doc, Key: h.Key, Score: 1 / (fuseK + float64(r+1))})
		}
	}
	slices.SortStableFunc(all, func(a, b Hit) int { return a.Doc - b.Doc })
	var h hitHeap
	for i := 0; i < len(all); {
		sum := Hit{Doc: all[i].Doc, Key: all[i].Key}
		for ; i < len(all) && all[i].Doc == sum.Doc; i++ {
			sum.Score += all[i].Score
		}
		h.offer(sum, limit)
	}
	return h.drain()
}

// rank scores the documents for the query's terms and returns the limit
// best allowed ones.
func (ix *Index) rank(ts []string, limit int, allow func(int) bool) []Hit {
	acc := getScores(len(ix.keys))
	defer putScores(acc)
	ix.weigh(ts, acc)
	for _, q := range acc.query {
		ps := ix.postings[q.id]
		s := q.weight * ix.idf[q.id]
		for _, p := range ps {
			if acc.v[p.doc] == 0 {
				acc.touched = append(acc.touched, p.doc)
			}
			acc.v[p.doc] += s * float64(p.part)
		}
	}
	return ix.top(acc, limit, allow)
}

// weighted is a query term of the index and its weight.
type weighted struct {
	id     int32
	weight float64
}

// weigh sets acc.query to the query's terms known to the index: each
// distinct term 1, then each expansion of them not in the query at its
// weight (the highest if several), at most maxQueryTerms in all.
func (ix *Index) weigh(ts []string, acc *scores) {
	add := func(t string, w float64) {
		id, ok := ix.vocab[t]
		if !ok {
			return
		}
		for i := range acc.query {
			if acc.query[i].id == id {
				acc.query[i].weight = max(acc.query[i].weight, w)
				return
			}
		}
		if len(acc.query) < maxQueryTerms {
			acc.query = append(acc.query, weighted{id, w})
		}
	}
	for _, t := range ts {
		if w, ok := placeWords[t]; ok {
			add(t, w)
		} else {
			add(t, 1)
		}
	}
	exp := expansions()
	unknown := 0
	for _, t := range ts {
		es := exp[t]
		if unknown < maxUnknownWords && !ix.known(t, exp) {
			es, unknown = ix.unknownWord(t), unknown+1
		}
		for _, e := range es {
			add(e.term, e.weight)
		}
	}
}

// top selects the limit best allowed documents with a min-heap.
func (ix *Index) top(acc *scores, limit int, allow func(int) bool) []Hit {
	h := hitHeap(acc.heap[:0])
	for _, d := range acc.touched {
		doc := int(d)
		hit := Hit{Doc: doc, Key: ix.keys[doc], Score: acc.v[d]}
		if len(h) == limit && !better(hit, h[0]) {
			continue
		}
		if allow != nil && !allow(doc) {
			continue
		}
		h.offer(hit, limit)
	}
	acc.heap = h
	return h.drain()
}

// scores is a search's scratch: a score per document, the documents
// touched, the query's terms and the heap, pooled so a search allocates
// no per-document array.
type scores struct {
	v       []float64
	touched []int32
	query   []weighted
	heap    []Hit
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
	s.touched, s.query, s.heap = s.touched[:0], s.query[:0], s.heap[:0]
	scorePool.Put(s)
}
