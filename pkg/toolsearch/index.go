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
	vocab    map[string]int32 // term → id
	postings [][]posting      // by term id
	idf      []float64        // by term id
}

// Len is the number of documents in the index.
func (ix *Index) Len() int { return len(ix.keys) }

// builder is one Build's state: the vocabulary, the stem of each word as
// written (a catalogue's vocabulary is small; lower-casing and stemming
// would dominate building), and a term-frequency scratch by term id.
type builder struct {
	ix      *Index
	ids     map[string]int32 // word as written → term id (-1: dropped)
	tf      []float64
	touched []int32
}

// Build indexes docs (their order is the Doc index of each Hit). Callers
// rebuild off the request path and swap the pointer.
func Build(docs []Doc) *Index {
	expansions() // the query expansions' table, built with the first index, not on a search
	b := &builder{ix: &Index{keys: make([]string, len(docs)), vocab: map[string]int32{}}, ids: map[string]int32{}}
	fieldTerms := make([][numFields][]int32, len(docs))
	var total [numFields]float64
	for i := range docs {
		b.ix.keys[i] = docs[i].Key
		fieldTerms[i] = b.docTerms(&docs[i])
		for f := range numFields {
			total[f] += float64(len(fieldTerms[i][f]))
		}
	}
	var avg [numFields]float64
	for f := range numFields {
		avg[f] = math.Max(1, total[f]/math.Max(1, float64(len(docs))))
	}
	b.ix.postings = make([][]posting, len(b.ix.vocab))
	b.tf = make([]float64, len(b.ix.vocab))
	for i := range docs {
		b.addDoc(int32(i), &fieldTerms[i], &avg)
	}
	n := float64(len(docs))
	b.ix.idf = make([]float64, len(b.ix.postings))
	for t, ps := range b.ix.postings {
		df := float64(len(ps))
		b.ix.idf[t] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	return b.ix
}

// addDoc adds one document's postings.
func (b *builder) addDoc(doc int32, ft *[numFields][]int32, avg *[numFields]float64) {
	for f := range numFields {
		norm := 1 - fieldB[f] + fieldB[f]*float64(len(ft[f]))/avg[f]
		for _, t := range ft[f] {
			if b.tf[t] == 0 {
				b.touched = append(b.touched, t)
			}
			b.tf[t] += fieldWeights[f] / norm
		}
	}
	for _, t := range b.touched {
		v := b.tf[t]
		b.ix.postings[t] = append(b.ix.postings[t], posting{doc: doc, part: float32(v / (k1 + v))})
		b.tf[t] = 0
	}
	b.touched = b.touched[:0]
}

// docTerms returns each field's term ids of d.
func (b *builder) docTerms(d *Doc) [numFields][]int32 {
	var ft [numFields][]int32
	ft[fieldName] = b.terms(d.Name, nil)
	ft[fieldDescription] = b.terms(d.Description, nil)
	for _, p := range d.Params {
		ft[fieldParams] = b.terms(p.Name, ft[fieldParams])
		ft[fieldParams] = b.terms(p.Description, ft[fieldParams])
	}
	ft[fieldBackend] = b.terms(d.Backend, nil)
	ft[fieldBackend] = b.terms(d.BackendDescription, ft[fieldBackend])
	return ft
}

// terms appends s's term ids to out: its words (eachWord), stop words
// dropped, stemmed, at most maxTokens.
func (b *builder) terms(s string, out []int32) []int32 {
	eachWord(s, func(raw string) {
		id, ok := b.ids[raw]
		if !ok {
			id = -1
			if w := strings.ToLower(raw); !dropped(w) {
				id = b.termID(stem(w))
			}
			b.ids[strings.Clone(raw)] = id
		}
		if id >= 0 && len(out) < maxTokens {
			out = append(out, id)
		}
	})
	return out
}

// termID is term's id, added to the vocabulary if new.
func (b *builder) termID(term string) int32 {
	id, ok := b.ix.vocab[term]
	if !ok {
		id = int32(len(b.ix.vocab))
		b.ix.vocab[term] = id
	}
	return id
}
