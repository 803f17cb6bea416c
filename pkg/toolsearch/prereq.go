package toolsearch

import (
	"slices"
	"strings"
	"unicode/utf8"
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
// once, in order; seen holds this build's texts' names (catalogues repeat
// texts).
func namesIn(d *Doc, seen map[string][]string) []string {
	var out []string
	add := func(text string) {
		ns, ok := seen[text]
		if !ok {
			eachName(text, func(w string) { ns = append(ns, strings.ToLower(w)) })
			seen[text] = ns
		}
		for _, w := range ns {
			if len(out) < maxNames && !slices.Contains(out, w) {
				out = append(out, w)
			}
		}
	}
	add(d.Description)
	for _, p := range d.Params {
		add(p.Description)
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
	if !strings.ContainsAny(s, "_-") {
		return
	}
	start, sep, n := -1, false, 0
	for i := 0; i <= len(s); {
		r, size := ' ', 1
		if i < len(s) {
			if r = rune(s[i]); r >= utf8.RuneSelf {
				r, size = utf8.DecodeRuneInString(s[i:])
			}
		}
		switch {
		case nameRune(r):
			if start < 0 {
				start, sep = i, false
			}
			sep = sep || r == '_' || r == '-'
		case start >= 0:
			if w := strings.Trim(s[start:i], "_-"); sep && toolLike(w) {
				fn(w)
			}
			start = -1
			if n++; n == maxTokens {
				return
			}
		}
		i += size
	}
}

// nameRune reports whether r can be part of a tool's name (see eachName).
func nameRune(r rune) bool {
	if r < utf8.RuneSelf {
		return r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-'
	}
	return classOf(r) == classWord
}

// prerequisites returns, by document, the other tools of its backend
// (backend, by document) that its texts name (names, by document; base:
// each document's name's number in bases, copies.go's baseName), first
// named first; nil when no document names another.
func prerequisites(backend, base []int32, bases map[string]int32, names [][]string) [][]int32 {
	var out [][]int32
	var byName map[[2]int32]int32 // {backend, base name} → document
	for i, ns := range names {
		for _, n := range ns {
			b, ok := bases[n]
			if !ok {
				continue
			}
			if byName == nil {
				byName = make(map[[2]int32]int32, len(base))
				for d := len(base) - 1; d >= 0; d-- { // the first of a backend's copies
					byName[[2]int32{backend[d], base[d]}] = int32(d)
				}
				out = make([][]int32, len(names))
			}
			if p, ok := byName[[2]int32{backend[i], b}]; ok && p != int32(i) && !slices.Contains(out[i], p) {
				out[i] = append(out[i], p)
			}
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
