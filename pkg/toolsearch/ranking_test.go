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

// TestCamelCaseNameMissedItsOneWordSpelling: a word written in pieces
// ("InfoQ", "GitHub") was only its pieces, so it never met the same name
// written as one word (the tool get-infoq-news), and "GitHub" found git's
// tools. Such a word is now its pieces and the whole, in tools and queries.
func TestCamelCaseNameMissedItsOneWordSpelling(t *testing.T) {
	t.Parallel()
	docs := []toolsearch.Doc{
		{Key: "get-infoq-news", Name: "get-infoq-news", Description: "Get the latest articles from infoq", Backend: "news"},
		{Key: "get-info", Name: "get-info", Description: "Get info about a queue", Backend: "mq"},
		{Key: "trending_repos", Name: "trending_repos", Description: "Trending repositories on github", Backend: "trends"},
		{Key: "git_add", Name: "git_add", Description: "Add files to the git index", Backend: "git"},
		{Key: "hub_status", Name: "hub_status", Description: "Status of a hub", Backend: "hub"},
	}
	for _, n := range []string{"get_file_info", "get_user_info", "git_log", "git_diff", "hub_list", "hub_join"} {
		docs = append(docs, toolsearch.Doc{Key: n, Name: n, Description: "Tool " + n, Backend: "misc"})
	}
	ix := toolsearch.Build(docs)
	for q, want := range map[string]string{"anything new on InfoQ?": "get-infoq-news", "what's hot on GitHub this week": "trending_repos"} {
		if got := keys(ix.Search(q, 1, nil)); len(got) == 0 || got[0] != want {
			t.Errorf("Search(%q) = %v, want %s first", q, got, want)
		}
	}
}
