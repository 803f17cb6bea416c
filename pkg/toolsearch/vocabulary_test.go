package toolsearch_test

import (
	"slices"
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// TestEverydayWordsMissedTheirTools: words users say for a capability
// that the tools' own words never use found other tools: "move the mouse
// over" (hover; it found tools that move files, notes and chess pieces),
// an "overview" (a summary), 换乘 (changing trains: 中转, a transfer).
func TestEverydayWordsMissedTheirTools(t *testing.T) {
	t.Parallel()
	docs, _ := benchDocs(t)
	ix := toolsearch.Build(docs)
	for q, want := range map[string]string{
		"Move the mouse over the Products menu (nav .products) so its dropdown pops open.": "playwright_hover",
		"Give me a quick overview of the Wikipedia article on the Peace of Westphalia.":    "get_summary",
		"明天从哈尔滨到昆明没有直达车，帮我查查需要换乘的火车票还有没有票":                                                 "get-interline-tickets",
	} {
		if got := keys(ix.Search(q, 3, nil)); !slices.Contains(got, want) {
			t.Errorf("Search(%q) = %v, want %s among the first 3", q, got, want)
		}
	}
}
