package toolsearch

import "testing"

// TestUnknownWordsOfALongRequestWereAllRead: each unknown word of a
// request costs a scan of the vocabulary, so a request of thousands of
// them (a client's search_tools query) cost 50% more than before; only the
// first maxUnknownWords of a ranking are read.
func TestUnknownWordsOfALongRequestWereAllRead(t *testing.T) {
	t.Parallel()
	var docs []Doc
	var ts []string
	for i := range 20 {
		p := "zq" + string(rune('a'+i)) + "x" // 4 bytes, the beginning of one tool's word
		docs = append(docs, Doc{Key: p, Name: p + "tail"})
		ts = append(ts, p)
	}
	ix := Build(docs)
	acc := getScores(ix.Len())
	defer putScores(acc)
	ix.weigh(ts, acc)
	if len(acc.query) != maxUnknownWords {
		t.Fatalf("%d unknown words read as %d terms, want the first %d", len(ts), len(acc.query), maxUnknownWords)
	}
}
