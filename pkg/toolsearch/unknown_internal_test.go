package toolsearch

import (
	"strings"
	"testing"
)

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

// TestALongQueryWasReadWhole: a search read all of its query, so one of
// 4 MB (a client's search_tools argument, up to the request body's bound)
// took 0.17–0.7 s; only its first maxQueryBytes are read now, cut at a
// character's start.
func TestALongQueryWasReadWhole(t *testing.T) {
	t.Parallel()
	ix := Build([]Doc{{Key: "weather", Name: "get_weather"}, {Key: "calc", Name: "calculate"}})
	q := "weather " + strings.Repeat("天", maxQueryBytes/3) + " calculate"
	got := ix.Search(q, 5, nil)
	if len(got) != 1 || got[0].Key != "weather" {
		t.Fatalf("Search(%d bytes) = %v, want the weather tool alone (the query's first %d bytes)", len(q), got, maxQueryBytes)
	}
	if c := cut("a天", 2); c != "a" {
		t.Fatalf("cut(a天, 2) = %q, want a", c)
	}
}
