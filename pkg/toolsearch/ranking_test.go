package toolsearch_test

import (
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// TestCJKPairsWereNotWords: two Han characters in a row are a word, so a
// tool whose description has "火车票" (train tickets) outranks one that
// has each of its characters apart, more often, but never the words.
func TestCJKPairsWereNotWords(t *testing.T) {
	t.Parallel()
	docs := []toolsearch.Doc{
		{Key: "scattered", Name: "lookup", Description: "火 车 票 火 车 票 车 票", Backend: "a"},
		{Key: "tickets", Name: "query", Description: "查询火车票余票信息，包括车次和出发时间。", Backend: "b"},
	}
	got := toolsearch.Build(docs).Search("火车票", 2, nil)
	if len(got) == 0 || got[0].Key != "tickets" {
		t.Errorf("Search(火车票) = %v, want tickets first", keys(got))
	}
}
