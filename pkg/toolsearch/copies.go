package toolsearch

import "strings"

// Several servers often offer the same tool (two file systems' write_file,
// two arXiv servers' search_papers): the later copies of a tool already
// found say nothing new and take the place of a tool that might be the
// one wanted. A hit whose name, less its backend's prefix, is that of a
// better hit goes after the hits with distinct names (kept, not dropped:
// a caller asking for many still gets it). copiesDepth is how many hits
// past the limit are ranked to fill the places of the copies moved down.
const copiesDepth = 5

// baseName is a tool's name less its backend's "{backend}_" prefix, as
// the aggregator advertises it, lower-cased.
func baseName(name, backend string) string {
	n := strings.ToLower(name)
	if p := strings.ToLower(backend) + "_"; backend != "" && strings.HasPrefix(n, p) {
		return n[len(p):]
	}
	return n
}

// distinct returns the limit first of hits (best first) with the copies
// of a better hit's tool moved after the rest, in place (hits are a few
// dozen at most: a linear look-up, no map).
func (ix *Index) distinct(hits []Hit, limit int) []Hit {
	n := 0 // hits[:n] are distinct
	var copies []Hit
	for _, h := range hits {
		if ix.copyOf(h, hits[:n]) {
			copies = append(copies, h)
			continue
		}
		hits[n] = h
		n++
	}
	copy(hits[n:], copies)
	return hits[:min(limit, len(hits))]
}

// copyOf reports whether h is a copy of a tool among kept.
func (ix *Index) copyOf(h Hit, kept []Hit) bool {
	for _, k := range kept {
		if ix.base[k.Doc] == ix.base[h.Doc] {
			return true
		}
	}
	return false
}

// numbered is s's number in m, a new one if s is not there yet.
func numbered(m map[string]int32, s string) int32 {
	n, ok := m[s]
	if !ok {
		n = int32(len(m))
		m[s] = n
	}
	return n
}
