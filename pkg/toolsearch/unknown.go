package toolsearch

import (
	"slices"
	"strings"
)

// A query word no tool uses, and whose expansions no tool uses either,
// often still means words the catalogue has: a compound written as one
// word ("flowchart" → "flow", "chart") or an abbreviation ("info" →
// "information", "stats" → "statistics"). Such a word is read as the two
// indexed words it splits into or, failing that, as the indexed words it
// begins (the maxPrefixTerms most frequent) or, failing both, as the
// indexed word one typing slip away or, failing all, as the longest
// indexed word it begins with ("tokenomics" → "token"), at the weights
// below.
const (
	compoundWeight  = 0.8
	prefixWeight    = 0.5
	minPartBytes    = 3 // the shortest half of a compound
	minPrefixBytes  = 4 // the shortest word read as a prefix (names: "Ana" is no "analysis")
	maxPrefixTerms  = 3
	maxPrefixScan   = 256 // indexed words beginning with it looked at, at most
	typoWeight      = 0.7
	maxUnknownWords = 8 // read so per ranking, so a long request of unknown words costs a bounded amount
	minTypoBytes    = 5 // shorter words are too often one edit from another word
	headWeight      = 0.5
	minHeadBytes    = 5
)

// sortedTerms returns the vocabulary's terms sorted, reusing last (the
// previous build's) when the vocabulary has not grown since; a new slice
// otherwise, as earlier indexes keep theirs.
func sortedTerms(vocab map[string]int32, last []string) []string {
	if len(last) == len(vocab) {
		return last
	}
	out := make([]string, 0, len(vocab))
	for t := range vocab {
		out = append(out, t)
	}
	slices.Sort(out)
	return out
}

// unknownWord returns what a query term t stands for when neither it nor
// its expansions are indexed words of a tool (see above); nil when it is
// a number, too short, or stands for nothing here.
func (ix *Index) unknownWord(t string) []expansion {
	if len(t) < minPartBytes || t[0] >= '0' && t[0] <= '9' {
		return nil
	}
	for i := minPartBytes; i+minPartBytes <= len(t); i++ {
		if ix.used(t[:i]) && ix.used(stem(t[i:])) {
			return []expansion{{t[:i], compoundWeight}, {stem(t[i:]), compoundWeight}}
		}
	}
	if len(t) < minPrefixBytes {
		return nil
	}
	if es := ix.prefixOf(t); len(es) > 0 || len(t) < minTypoBytes {
		return es
	}
	if es := ix.typoOf(t); es != nil {
		return es
	}
	return ix.headOf(t)
}

// headOf returns the longest indexed word t begins with, of minHeadBytes
// and half of t at least ("tokenomics" → "token"), at headWeight.
func (ix *Index) headOf(t string) []expansion {
	for k := len(t) - 1; k >= minHeadBytes && 2*k >= len(t); k-- {
		if ix.used(t[:k]) {
			return []expansion{{t[:k], headWeight}}
		}
	}
	return nil
}

// typoOf returns the indexed word most tools use among those one edit
// from t (a letter added, dropped, changed, or two swapped; the first
// letter kept: "wether" → "weather"), at typoWeight.
func (ix *Index) typoOf(t string) []expansion {
	lo, _ := slices.BinarySearch(ix.sorted, t[:1])
	best, df := "", 0
	for i := lo; i < len(ix.sorted) && ix.sorted[i][0] == t[0]; i++ {
		w := ix.sorted[i]
		if len(w) < len(t)-1 || len(w) > len(t)+1 || !oneEdit(t, w) {
			continue
		}
		if d := len(ix.postings[ix.vocab[w]]); d > df {
			best, df = w, d
		}
	}
	if df == 0 {
		return nil
	}
	return []expansion{{best, typoWeight}}
}

// oneEdit reports whether a and b differ by one insertion, deletion,
// substitution or swap of two adjacent bytes.
func oneEdit(a, b string) bool {
	if a == b {
		return false
	}
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	switch {
	case len(a) == len(b):
		return a[i+1:] == b[i+1:] || i+1 < len(a) && a[i] == b[i+1] && a[i+1] == b[i] && a[i+2:] == b[i+2:]
	case len(a)+1 == len(b):
		return a[i:] == b[i+1:]
	case len(a) == len(b)+1:
		return a[i+1:] == b[i:]
	}
	return false
}

// prefixOf returns the maxPrefixTerms indexed words beginning with t that
// most tools use (ties by the word), at prefixWeight.
func (ix *Index) prefixOf(t string) []expansion {
	var best []expansion
	var df []int
	i, _ := slices.BinarySearch(ix.sorted, t)
	for n := 0; i < len(ix.sorted) && n < maxPrefixScan && strings.HasPrefix(ix.sorted[i], t); i, n = i+1, n+1 {
		d := len(ix.postings[ix.vocab[ix.sorted[i]]])
		if d == 0 || ix.sorted[i] == t {
			continue
		}
		k := len(df)
		for k > 0 && df[k-1] < d {
			k--
		}
		if k < maxPrefixTerms {
			best = slices.Insert(best, k, expansion{ix.sorted[i], prefixWeight})
			df = slices.Insert(df, k, d)
			best, df = best[:min(len(best), maxPrefixTerms)], df[:min(len(df), maxPrefixTerms)]
		}
	}
	return best
}

// used reports whether some tool of the index has the term t.
func (ix *Index) used(t string) bool {
	id, ok := ix.vocab[t]
	return ok && len(ix.postings[id]) > 0
}

// known reports whether t, or one of its expansions, is a term some tool
// of the index has.
func (ix *Index) known(t string, exp map[string][]expansion) bool {
	if ix.used(t) {
		return true
	}
	return slices.ContainsFunc(exp[t], func(e expansion) bool { return ix.used(e.term) })
}
