package toolsearch

import (
	"math"
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
	cs := clauses(query)
	parts := append(cs, steps...)
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
	ws := partWeights(lists)
	if len(cs) == 1 {
		ws[0] = oneClauseWeight
	}
	hits := ix.siblings(fuse(lists, ws, partsFuseK, pool), pool)
	return ix.distinct(ix.lift(diversify(hits, lists[1:], ws[1:], want), want, allow), want)
}

// oneClauseWeight is the whole request's weight when it is one clause with
// steps it implies: its ranking is the clause's too, so fused at 1 it would
// count twice against each step ("summarize /root/a.pdf" found PDF
// splitters, whose words match, before a reader, which the request needs).
const oneClauseWeight = 0.5

// partPower sets how much a part's weight follows its best hit's score:
// a part whose best tool matches it weakly ("… 2,500 CNY for meals" in a
// budget) is more likely the request's context than a step of its work.
const partPower = 0.5

// partWeights are the weights of a request's rankings in fusion and
// diversification: the whole request's 1, each part's its best hit's
// score over the best part's best, to the power partPower.
func partWeights(lists [][]Hit) []float64 {
	ws := make([]float64, len(lists))
	best := 0.0
	for _, l := range lists[1:] {
		if len(l) > 0 {
			best = max(best, l[0].Score)
		}
	}
	ws[0] = 1
	for i, l := range lists[1:] {
		if len(l) > 0 && best > 0 {
			ws[i+1] = math.Pow(l[0].Score/best, partPower)
		}
	}
	return ws
}

// FuseDepth is how many hits of each ranking are fused; fuseK is reciprocal
// rank fusion's constant (smaller favours each ranking's first hits more)
// in Fuse, partsFuseK in the fusion of a request's parts, where each part's
// first hits are what it asks for.
const (
	FuseDepth  = 20
	fuseK      = 5.0
	partsFuseK = 1.0
)

// Fuse merges rankings of one index's documents by reciprocal rank,
// Σ 1/(fuseK + rank) over the lists, and returns the limit best (ties by
// Doc); each list should hold its first FuseDepth hits at least.
func Fuse(lists [][]Hit, limit int) []Hit { return fuse(lists, nil, fuseK, limit) }

// fuse is Fuse with constant k and each list's reciprocal ranks times its
// weight in ws (nil: all 1).
func fuse(lists [][]Hit, ws []float64, k float64, limit int) []Hit {
	var all []Hit
	for i, l := range lists {
		w := 1.0
		if ws != nil {
			w = ws[i]
		}
		for r, h := range l {
			all = append(all, Hit{Doc: h.Doc, Key: h.Key, Score: w / (k + float64(r+1))})
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

// otherExpansionsWeight is how much a query word's matches past its best
// one count (its expansions': "page" matching a tool's "website", "site"
// and "url"): a word counts once, as Lucene's synonym queries do, not
// once per expansion a tool happens to hold.
const otherExpansionsWeight = 0.5

// rank scores the documents for the query's terms and returns the limit
// best allowed ones: each query word adds its best match's score (the word
// or an expansion of it), plus otherExpansionsWeight times the rest.
func (ix *Index) rank(ts []string, limit int, allow func(int) bool) []Hit {
	acc := getScores(len(ix.keys))
	defer putScores(acc)
	ix.weigh(ts, acc)
	for word := int32(1); word <= acc.words; word++ {
		n := 0
		for _, q := range acc.query {
			if q.word == word-1 {
				n++
			}
		}
		for _, q := range acc.query {
			if q.word == word-1 {
				ix.addTerm(acc, q, word, n == 1)
			}
		}
	}
	return ix.top(acc, limit, allow)
}

// addTerm adds the matches of q, a term of the query's word-th word (from
// 1), to acc's scores: whole when q is its word's only term (alone), else
// in one pass as o·Σ + (1-o)·best over the word's terms, the best kept per
// document for the word last seen there.
func (ix *Index) addTerm(acc *scores, q weighted, word int32, alone bool) {
	const o = otherExpansionsWeight
	s := q.weight * ix.idf[q.id]
	for _, p := range ix.postings[q.id] {
		d, x := p.doc, s*float64(p.part)
		if acc.v[d] == 0 {
			acc.touched = append(acc.touched, d)
		}
		if alone {
			acc.v[d] += x
			continue
		}
		m := &acc.best[d]
		b := 0.0
		if m.word == word {
			b = m.score
		}
		acc.v[d] += o * x
		if x > b {
			acc.v[d] += (1 - o) * (x - b)
			*m = wordBest{x, word}
		}
	}
}

// weighted is a query term of the index, its weight and the query word
// (its index among the query's distinct words) it stands for.
type weighted struct {
	id     int32
	word   int32
	weight float64
}

// weigh sets acc.query to the query's terms known to the index: each
// distinct word 1 (a place word its weight), then each word's expansions
// that are not words of the query at theirs (the highest if one word's
// expansions repeat a term), at most maxQueryTerms in all.
func (ix *Index) weigh(ts []string, acc *scores) {
	heads := ts[:0:0]
	for _, t := range ts {
		if !slices.Contains(heads, t) && len(heads) < maxQueryTerms {
			heads = append(heads, t)
		}
	}
	for i, t := range heads {
		w, ok := placeWords[t]
		if !ok {
			w = 1
		}
		acc.add(ix, int32(i), t, w, 0)
	}
	words := len(acc.query)
	exp := expansions()
	unknown := 0
	for i, t := range heads {
		es := exp[t]
		if unknown < maxUnknownWords && !ix.known(t, exp) {
			es, unknown = ix.unknownWord(t), unknown+1
		}
		for _, e := range es {
			acc.add(ix, int32(i), e.term, e.weight, words)
		}
	}
	acc.words = int32(len(heads))
}

// add appends term t, standing for the query's word-th word, at weight w
// to acc.query, unless the index lacks it, it is one of the query's words
// (acc.query[:words]) or maxQueryTerms are there; a term repeated for one
// word keeps its highest weight.
func (acc *scores) add(ix *Index, word int32, t string, w float64, words int) {
	id, ok := ix.vocab[t]
	if !ok {
		return
	}
	for i := range acc.query {
		q := &acc.query[i]
		switch {
		case q.id != id:
		case i < words: // a query word is no other word's expansion
			return
		case q.word == word:
			q.weight = max(q.weight, w)
			return
		}
	}
	if len(acc.query) < maxQueryTerms {
		acc.query = append(acc.query, weighted{id: id, word: word, weight: w})
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
	best    []wordBest // each document's best match of one query word
	touched []int32
	query   []weighted
	words   int32 // distinct query words
	heap    []Hit
}

// wordBest is a document's best match of the query word numbered word
// (from 1; 0: none yet).
type wordBest struct {
	score float64
	word  int32
}

var scorePool sync.Pool

func getScores(n int) *scores {
	s, _ := scorePool.Get().(*scores)
	if s == nil || cap(s.v) < n {
		return &scores{v: make([]float64, n), best: make([]wordBest, n)}
	}
	s.v, s.best = s.v[:n], s.best[:n]
	return s
}

func putScores(s *scores) {
	for _, d := range s.touched {
		s.v[d], s.best[d] = 0, wordBest{}
	}
	s.touched, s.query, s.heap = s.touched[:0], s.query[:0], s.heap[:0]
	scorePool.Put(s)
}
