package toolsearch

import (
	"hash/maphash"
	"maps"
	"math"
	"strings"
)

// Builder builds the indexes of successive catalogues, keeping each tool's
// analysed text (its fields' term ids) and the vocabulary from one build to
// the next, so a rebuild after a catalogue change analyses only the tools
// that are new or changed. Not safe for concurrent use; its Indexes are.
type Builder struct {
	vocab  map[string]int32    // stem → term id
	sorted []string            // the vocabulary's terms, sorted, as of the last build
	ids    map[string]int32    // word as written → term id (-1: dropped)
	docs   map[docHash]*fields // a Doc's text (its docKey) → its analysis
	seeds  [2]maphash.Seed
	gen    uint64 // builds so far
}

// fields are one Doc's term ids by field, the tool names its texts may
// name (prereq.go), and the last build that used them.
type fields struct {
	ft    [numFields][]int32
	names []string
	gen   uint64
}

// maxVocab bounds the vocabulary a Builder keeps from past catalogues:
// past it, it starts over; keepBuilds is how many builds an unused tool's
// analysis is kept (catalogues of several principals interleave).
const (
	maxVocab   = 1 << 16
	keepBuilds = 16
)

// NewBuilder returns a Builder with nothing analysed yet. It loads the
// query expansions' table (WordNet's and the synonyms', about 25 ms once
// per process) so no build, and no search, waits for it.
func NewBuilder() *Builder {
	expansions()
	return &Builder{vocab: map[string]int32{}, ids: map[string]int32{}, docs: map[docHash]*fields{},
		seeds: [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}}
}

// Build indexes docs (their order is the Doc index of each Hit) with a
// new Builder. Callers rebuild off the request path and swap the pointer.
func Build(docs []Doc) *Index { return NewBuilder().Build(docs) }

// Build indexes docs (their order is the Doc index of each Hit), reusing
// the analysis of the docs it indexed last time.
func (bl *Builder) Build(docs []Doc) *Index {
	bl.gen++
	texts := map[string][]int32{}  // this build's text → term ids (catalogues repeat parameter texts)
	named := map[string][]string{} // this build's text → the tool names it may name (prereq.go)
	fts := make([]*[numFields][]int32, len(docs))
	names := make([][]string, len(docs))
	var total [numFields]float64
	for i := range docs {
		key := bl.docKey(&docs[i])
		f := bl.docs[key]
		if f == nil {
			f = &fields{ft: bl.docTerms(&docs[i], texts), names: namesIn(&docs[i], named)}
			bl.docs[key] = f
		}
		f.gen = bl.gen
		fts[i], names[i] = &f.ft, f.names
		for k := range numFields {
			total[k] += float64(len(f.ft[k]))
		}
	}
	ix := bl.index(docs, fts, names, &total)
	bl.forget(len(docs))
	return ix
}

// index makes the index of docs from their term ids and the tool names
// their texts may name.
func (bl *Builder) index(docs []Doc, fts []*[numFields][]int32, names [][]string, total *[numFields]float64) *Index {
	bl.sorted = sortedTerms(bl.vocab, bl.sorted)
	ix := &Index{keys: make([]string, len(docs)), vocab: maps.Clone(bl.vocab), sorted: bl.sorted, postings: make([][]posting, len(bl.vocab))}
	var avg [numFields]float64
	for f := range numFields {
		avg[f] = math.Max(1, total[f]/math.Max(1, float64(len(docs))))
	}
	carvePostings(ix.postings, fts)
	acc := &postingsBuilder{ix: ix, tf: make([]float64, len(bl.vocab))}
	ix.backend, ix.base = make([]int32, len(docs)), make([]int32, len(docs))
	backends, bases := map[string]int32{}, map[string]int32{}
	for i := range docs {
		ix.base[i] = numbered(bases, baseName(docs[i].Name, docs[i].Backend))
		ix.keys[i] = docs[i].Key
		b, ok := backends[docs[i].Backend]
		if !ok {
			b = int32(len(backends))
			backends[docs[i].Backend] = b
		}
		ix.backend[i] = b
		acc.addDoc(int32(i), fts[i], &avg)
	}
	ix.prereqs = prerequisites(ix.backend, ix.base, bases, names)
	n := float64(len(docs))
	ix.idf = make([]float64, len(ix.postings))
	for t, ps := range ix.postings {
		df := float64(len(ps))
		ix.idf[t] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	return ix
}

// carvePostings gives each term's postings its exact capacity (its
// document frequency in fts) out of one array, so filling them allocates
// nothing more.
func carvePostings(postings [][]posting, fts []*[numFields][]int32) {
	df := make([]int32, len(postings))
	last := make([]int32, len(postings)) // the last document counted + 1
	total := 0
	for i, ft := range fts {
		for f := range numFields {
			for _, t := range ft[f] {
				if last[t] != int32(i+1) {
					last[t] = int32(i + 1)
					df[t]++
					total++
				}
			}
		}
	}
	all := make([]posting, total)
	for t, n := range df {
		postings[t], all = all[:0:n], all[n:]
	}
}

// forget drops the analyses unused for keepBuilds builds (those of all
// the builds since, when they outnumber the current catalogue 4 to 1),
// and everything when the vocabulary has grown past maxVocab.
func (bl *Builder) forget(current int) {
	since := uint64(keepBuilds)
	if len(bl.docs) > 4*current {
		since = 1
	}
	for k, f := range bl.docs {
		if bl.gen-f.gen >= since {
			delete(bl.docs, k)
		}
	}
	if len(bl.vocab) > maxVocab {
		*bl = *NewBuilder()
	}
}

// docHash identifies a Doc's text: two 64-bit hashes under independent
// random seeds (a collision between two texts is out of reach, and
// nothing a client sends can aim at one).
type docHash [2]uint64

// docKey is the hash of the text of d that its analysis depends on
// (hashed, not concatenated: a rebuild copies no text).
func (bl *Builder) docKey(d *Doc) docHash {
	var k docHash
	for i := range k {
		var h maphash.Hash
		h.SetSeed(bl.seeds[i])
		for _, s := range []string{d.Name, d.Description, d.Backend, d.BackendDescription} {
			h.WriteString(s)
			h.WriteByte(0)
		}
		for _, p := range d.Params {
			h.WriteString(p.Name)
			h.WriteByte(1)
			h.WriteString(p.Description)
			h.WriteByte(0)
		}
		k[i] = h.Sum64()
	}
	return k
}

// postingsBuilder accumulates an index's postings, with a term-frequency
// scratch by term id.
type postingsBuilder struct {
	ix      *Index
	tf      []float64
	touched []int32
}

// addDoc adds one document's postings.
func (b *postingsBuilder) addDoc(doc int32, ft *[numFields][]int32, avg *[numFields]float64) {
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

// docTerms returns each field's term ids of d, its Chinese texts glossed.
func (bl *Builder) docTerms(d *Doc, texts map[string][]int32) [numFields][]int32 {
	var ft [numFields][]int32
	ft[fieldName] = bl.terms(d.Name, nil, texts)
	ft[fieldDescription] = bl.terms(glossed(d.Description), nil, texts)
	ft[fieldLead] = bl.terms(glossed(lead(d.Description)), nil, texts)
	for _, p := range d.Params {
		ft[fieldParams] = bl.terms(p.Name, ft[fieldParams], texts)
		ft[fieldParams] = bl.terms(glossed(p.Description), ft[fieldParams], texts)
	}
	ft[fieldBackend] = bl.terms(d.Backend, nil, texts)
	ft[fieldBackend] = bl.terms(glossed(d.BackendDescription), ft[fieldBackend], texts)
	return ft
}

// terms appends s's term ids to out: its words (eachWord), stop words
// dropped, stemmed, at most maxTokens.
func (bl *Builder) terms(s string, out []int32, texts map[string][]int32) []int32 {
	ts, ok := texts[s]
	if !ok {
		eachWord(s, func(raw string) {
			id, ok := bl.ids[raw]
			if !ok {
				id = -1
				if w := strings.ToLower(raw); !dropped(w) {
					id = bl.termID(stem(w))
				}
				bl.ids[strings.Clone(raw)] = id
			}
			if id >= 0 && len(ts) < maxTokens {
				ts = append(ts, id)
			}
		})
		texts[s] = ts
	}
	return append(out, ts[:min(len(ts), max(0, maxTokens-len(out)))]...)
}

// termID is term's id, added to the vocabulary if new.
func (bl *Builder) termID(term string) int32 {
	id, ok := bl.vocab[term]
	if !ok {
		id = int32(len(bl.vocab))
		bl.vocab[term] = id
	}
	return id
}

// lead is s's first sentence: up to the first '.', '!' or '?' followed by
// a space, or the first line break.
func lead(s string) string {
	s = strings.TrimSpace(s)
	for i := 0; i < len(s); i++ {
		switch {
		case s[i] == '\n':
			return s[:i]
		case strings.IndexByte(".!?", s[i]) >= 0 && (i+1 == len(s) || s[i+1] == ' '):
			return s[:i]
		}
	}
	return s
}
