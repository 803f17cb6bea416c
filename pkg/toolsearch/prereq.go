package toolsearch

import (
	"slices"
	"strings"
	"unicode"
)

// A server's tool often names, in its description or a parameter's, another
// tool of the same server to call first or that supplies one of its inputs
// ("station_code: from get-station-code-by-names", "call
// resolve-library-id first"). A request that finds the tool needs that one
// too, though it says nothing of it: each of the first liftReach hits
// places the tools it names (at most liftMax) right after itself. Only
// names unlike a common word count: of at least minPrereqName bytes, with
// a '_' or a '-'. Chosen on the tuning half of LiveMCPBench's tasks; the
// held-out half gained too, and the single-intent sets lost nothing.
const (
	liftReach     = 3
	liftMax       = 2
	minPrereqName = 6
	maxNames      = 64 // the name-like words kept of one tool's texts
)

// namesIn returns the words of d's description and parameters'
// descriptions that could be a tool's name (toolLike), lower-cased, each
// once, in order.
func namesIn(d *Doc) []string {
	var out []string
	add := func(w string) {
		if w = strings.ToLower(w); len(out) < maxNames && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	eachName(d.Description, add)
	for _, p := range d.Params {
		eachName(p.Description, add)
	}
	return out
}

// toolLike reports whether a word could only be a tool's name (see above).
func toolLike(w string) bool {
	return len(w) >= minPrereqName && strings.ContainsAny(w, "_-")
}

// eachName calls fn with each toolLike run of s's letters (not CJK
// ideographs, which run into names unspaced), digits, '_' and '-', its
// leading and trailing '_' and '-' trimmed; it reads maxTokens runs at most.
func eachName(s string, fn func(string)) {
	start, n := -1, 0
	for i, r := range s + " " {
		if unicode.IsLetter(r) && classOf(r) != classIdeograph || unicode.IsDigit(r) || r == '_' || r == '-' {
			if start < 0 {
				start = i
			}
			continue
		}
		if start >= 0 {
			if w := strings.Trim(s[start:i], "_-"); toolLike(w) {
				fn(w)
			}
			if n++; n == maxTokens {
				return
			}
		}
		start = -1
	}
}

// prerequisites returns, by document, the other tools of its backend that
// its texts name (names: each document's namesIn), first named first; nil
// when no document names another.
func prerequisites(docs []Doc, backend []int32, names [][]string) [][]int32 {
	type named struct {
		backend int32
		name    string
	}
	byName := map[named]int32{}
	for i := range docs {
		if n := baseName(docs[i].Name, docs[i].Backend); toolLike(n) {
			byName[named{backend[i], n}] = int32(i)
		}
	}
	var out [][]int32
	for i := range docs {
		for _, n := range names[i] {
			p, ok := byName[named{backend[i], n}]
			if !ok || p == int32(i) {
				continue
			}
			if out == nil {
				out = make([][]int32, len(docs))
			}
			out[i] = append(out[i], p)
		}
	}
	return out
}

// lift returns hits (best first) with the tools each of the first
// liftReach names (prerequisites) placed right after it, at most liftMax
// of them: moved up when ranked lower, added (with its score) when not
// ranked and allow accepts them. One lifted into the first liftReach lifts
// its own in turn. The result is cut to limit.
func (ix *Index) lift(hits []Hit, limit int, allow func(int) bool) []Hit {
	if ix.prereqs == nil {
		return hits[:min(limit, len(hits))]
	}
	for j := 0; j < min(liftReach, len(hits)); j++ {
		at := j + 1
		for _, p := range ix.prereqs[hits[j].Doc] {
			if at-j > liftMax {
				break
			}
			d := int(p)
			k := slices.IndexFunc(hits, func(h Hit) bool { return h.Doc == d })
			switch {
			case k >= 0 && k < at:
				continue
			case k >= 0:
				h := hits[k]
				copy(hits[at+1:k+1], hits[at:k])
				hits[at] = h
			case allow == nil || allow(d):
				hits = slices.Insert(hits, at, Hit{Doc: d, Key: ix.keys[d], Score: hits[j].Score})
			default:
				continue
			}
			at++
		}
	}
	return hits[:min(limit, len(hits))]
}
