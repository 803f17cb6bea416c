package toolsearch_test

import (
	"slices"
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// TestSynonymsOfOneWordOutscoredTheWord: a query word counted once per
// expansion a tool held, so "page" found the sitemap tool, whose text says
// "website", "site", "URL" and "web" (each a synonym of "page"), before the
// tool that reads "the page" a user has open.
func TestSynonymsOfOneWordOutscoredTheWord(t *testing.T) {
	t.Parallel()
	docs := []toolsearch.Doc{
		{Key: "get_sitemap_tree", Name: "get_sitemap_tree", Description: "Parse the sitemap tree of a website (its site map).",
			Params: []toolsearch.Param{{Name: "url", Description: "The URL of the website"}}, Backend: "sitemap"},
		{Key: "get_visible_text", Name: "get_visible_text", Description: "Get the visible text of the current page.", Backend: "browser"},
		{Key: "press_key", Name: "press_key", Description: "Press a key on the keyboard.", Backend: "browser"},
		{Key: "read_file", Name: "read_file", Description: "Read a file from disk.", Backend: "fs"},
		{Key: "list_directory", Name: "list_directory", Description: "List a directory's entries.", Backend: "fs"},
	}
	ix := toolsearch.Build(docs)
	if got := keys(ix.Search("what is on the page right now", 2, nil)); len(got) == 0 || got[0] != "get_visible_text" {
		t.Errorf("Search = %v, want get_visible_text first", got)
	}
}

// TestContextClausesCrowdedOutTheSteps: every part of a request had an
// equal say, so a part that only sets the scene ("my flight lands at 6pm",
// whose best tool matches it weakly) took a place from a step the request
// needs: placing the hotel, to find restaurants near it. A part's say now
// follows how well its best tool matches it.
func TestContextClausesCrowdedOutTheSteps(t *testing.T) {
	t.Parallel()
	docs, _ := benchDocs(t)
	ix := toolsearch.Build(docs)
	q := "My flight lands at 6pm, my hotel is near the Louvre, and I have two days. Check the weather in Paris and find restaurants near the hotel."
	got := keys(ix.Search(q, 5, nil))
	for _, want := range []string{"geocode_address", "find_nearby_places"} {
		if !slices.Contains(got, want) {
			t.Errorf("Search = %v, want %s among the first 5", got, want)
		}
	}
}

// TestOnePartsRunnersUpOutrankedAnotherPartsBest: fused by reciprocal
// rank with a constant of 5, a part's second and third tools (another
// price tool) outranked another part's first, so "… and save a summary to
// /tmp/tsla.md" lost the file writer from the first 5; the parts' fusion
// now favours each part's first hits (partsFuseK 1).
func TestOnePartsRunnersUpOutrankedAnotherPartsBest(t *testing.T) {
	t.Parallel()
	docs, _ := benchDocs(t)
	ix := toolsearch.Build(docs)
	got := keys(ix.Search("Look up Tesla's stock price, get the latest news about it and save a summary to /tmp/tsla.md", 5, nil))
	for _, want := range []string{"get_ticker_news", "write_file"} {
		if !slices.Contains(got, want) {
			t.Errorf("Search = %v, want %s among the first 5", got, want)
		}
	}
}
