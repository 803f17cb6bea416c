package toolsearch_test

import (
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// FuzzSearch: any query (a client's search_tools argument) returns at
// most limit hits, each a document of the index, without panicking.
func FuzzSearch(f *testing.F) {
	for _, q := range []string{"", "wheather", "flowchart", "17% of 2340", "3 × 4 ÷ 2", "12 squared", "a%", "info", "zz", "火车票 tomorrow", "save to /root/x.docx",
		"tmrw wx hn", "spin up a deck", "who owns 8.8.8.8", "[::1]:443", "me@example.com", "org.a.b:art:1.0", "2024-03-15 15:30",
		"明天天气预报 新闻", "youtube.com/watch?v=x", "beach.jpg", "one tokenomics"} {
		f.Add(q)
	}
	ix := toolsearch.Build(append(smallCatalogue, usersWordsCatalogue...))
	f.Fuzz(func(t *testing.T, q string) {
		got := ix.Search(q, 5, nil)
		if len(got) > 5 {
			t.Fatalf("Search(%q) gave %d hits, limit 5", q, len(got))
		}
		for _, h := range got {
			if h.Doc < 0 || h.Doc >= ix.Len() {
				t.Fatalf("Search(%q) gave document %d of %d", q, h.Doc, ix.Len())
			}
		}
	})
}
