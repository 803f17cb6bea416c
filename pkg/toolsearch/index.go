package toolsearch

import (
	"math"
	"strings"
)

// The indexed fields of a tool, in the order of fieldWeights.
const (
	fieldName = iota
	fieldDescription
	fieldParams
	fieldBackend
	numFields
)

// BM25F's parameters: each field's weight and length normalisation, and the
// term-frequency saturation k1. The name weighs most: it is short and says
// what the tool does; the backend's words are shared by all of its tools.
var (
	fieldWeights = [numFields]float64{3.0, 1.0, 0.5, 0.6}
	fieldB       = [numFields]float64{0.3, 0.75, 0.75, 0.5}
)

const k1 = 1.2

// posting is one document containing a term, with its BM25F pseudo
// term frequency (the field-weighted, length-normalised sum) saturated:
// tf/(k1+tf), so a search only multiplies by the term's idf.
type posting struct {
	doc  int32
	part float32
}

// Index is an immutable BM25F index over a slice of Docs.
type Index struct {
	keys     []string
	postings map[string][]posting
	idf      map[string]float64
	scratch  map[string]float64 // Build's per-document term frequencies
}

// Len is the number of documents in the index.
func (ix *Index) Len() int { return len(ix.keys) }

// Build indexes docs (their order is the Doc index of each Hit). Building
// 10,000 tools takes tens of milliseconds; callers rebuild off the request
// path and swap the pointer.
func Build(docs []Doc) *Index {
	stems := map[string]string{}
	fieldTerms := make([][numFields][]string, len(docs))
	var total [numFields]float64
	for i := range docs {
		fieldTerms[i] = docTerms(&docs[i], stems)
		for f := range numFields {
			total[f] += float64(len(fieldTerms[i][f]))
		}
	}
	var avg [numFields]float64
	for f := range numFields {
		avg[f] = math.Max(1, total[f]/math.Max(1, float64(len(docs))))
	}
	ix := &Index{keys: make([]string, len(docs)), postings: map[string][]posting{}, idf: map[string]float64{}, scratch: map[string]float64{}}
	for i := range docs {
		ix.keys[i] = docs[i].Key
		ix.addDoc(int32(i), &fieldTerms[i], &avg)
	}
	n := float64(len(docs))
	for t, ps := range ix.postings {
		df := float64(len(ps))
		ix.idf[t] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	ix.scratch = nil
	return ix
}

// addDoc adds one document's postings.
func (ix *Index) addDoc(doc int32, ft *[numFields][]string, avg *[numFields]float64) {
	tf := ix.scratch
	clear(tf)
	for f := range numFields {
		norm := 1 - fieldB[f] + fieldB[f]*float64(len(ft[f]))/avg[f]
		for _, t := range ft[f] {
			tf[t] += fieldWeights[f] / norm
		}
	}
	for t, v := range tf {
		ix.postings[t] = append(ix.postings[t], posting{doc: doc, part: float32(v / (k1 + v))})
	}
}

// docTerms returns each field's terms of d, stemming through the cache.
func docTerms(d *Doc, stems map[string]string) [numFields][]string {
	var ft [numFields][]string
	ft[fieldName] = cachedTerms(d.Name, stems, nil)
	ft[fieldDescription] = cachedTerms(d.Description, stems, nil)
	for _, p := range d.Params {
		ft[fieldParams] = cachedTerms(p.Name, stems, ft[fieldParams])
		ft[fieldParams] = cachedTerms(p.Description, stems, ft[fieldParams])
	}
	ft[fieldBackend] = cachedTerms(d.Backend, stems, nil)
	ft[fieldBackend] = cachedTerms(d.BackendDescription, stems, ft[fieldBackend])
	return ft
}

// cachedTerms appends s's terms to out, as terms does, memoised by the word
// as written (a catalogue's vocabulary is small; lower-casing and stemming
// would dominate building).
func cachedTerms(s string, stems map[string]string, out []string) []string {
	eachWord(s, func(raw string) {
		st, ok := stems[raw]
		if !ok {
			w := strings.ToLower(raw)
			if !dropped(w) {
				st = stem(w)
			}
			stems[strings.Clone(raw)] = st
		}
		if st != "" && len(out) < maxTokens {
			out = append(out, st)
		}
	})
	return out
}
