package toolsearch_test

import (
	"slices"
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// A request that says where to save its result ("save it in
// /root/markdown/x.md") but never says "write a file" found no file
// writer among LiveMCPBench's 527 tools: its words went to tools that save
// other things (presentations, PDFs). A path to read implies no write.
func TestSaveToAPathFoundNoFileWriter(t *testing.T) {
	t.Parallel()
	docs, _ := benchDocs(t)
	ix := toolsearch.Build(docs)
	for _, q := range []string{
		"Generate a deep report of bitcoin and save it in /root/markdown/bitcoin.md",
		"Help me write a quick start tutorial for Ant Design in markdown at /root/markdown/antd_tutorial.md.",
	} {
		if got := keys(ix.Search(q, 5, nil)); !slices.Contains(got, "write_file") {
			t.Errorf("Search(%q) = %v, want write_file among the first 5", q, got)
		}
	}
	q := "What files are in my /root/music folder?"
	if got := keys(ix.Search(q, 5, nil)); slices.Contains(got, "write_file") {
		t.Errorf("Search(%q) = %v: a path to read implied a write", q, got)
	}
}
