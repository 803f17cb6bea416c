package toolsearch

// The indexed fields of a tool, in the order of fieldWeights.
const (
	fieldName = iota
	fieldDescription
	fieldParams
	fieldBackend
	fieldLead // the description's first sentence: what the tool does
	numFields
)

// BM25F's parameters: each field's weight and length normalisation, and the
// term-frequency saturation k1. The name weighs most: it is short and says
// what the tool does; so does the description's first sentence (counted
// again as fieldLead), more than the rest of it (its Args, its caveats);
// the backend's words are shared by all of its tools.
var (
	fieldWeights = [numFields]float64{3.0, 0.5, 0.5, 0.6, 1.0}
	fieldB       = [numFields]float64{0.3, 0.75, 0.75, 0.5, 0.3}
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
	backend  []int32          // by document: its backend's number
	base     []int32          // by document: the number of its name less its backend's prefix (copies.go)
	vocab    map[string]int32 // term → id
	sorted   []string         // the vocabulary's terms, sorted (unknown.go)
	postings [][]posting      // by term id
	idf      []float64        // by term id
	prereqs  [][]int32        // by document: the tools of its backend it names (prereq.go)
}

// Len is the number of documents in the index.
func (ix *Index) Len() int { return len(ix.keys) }
