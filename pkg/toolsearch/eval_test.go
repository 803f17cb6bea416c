package toolsearch_test

import (
	"os"
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
	"github.com/vmcp/vmcp/test/livemcpbench"
)

// benchDocs loads the LiveMCPBench catalogue as Docs (Key = tool name), or
// skips when its data directory is absent.
func benchDocs(t testing.TB) ([]toolsearch.Doc, []livemcpbench.Task) {
	t.Helper()
	dir := livemcpbench.Dir()
	if _, err := os.Stat(dir); err != nil {
		t.Skipf("LiveMCPBench data not found at %s", dir)
	}
	servers, tasks, err := livemcpbench.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	var docs []toolsearch.Doc
	for _, s := range servers {
		for _, tool := range s.Tools {
			docs = append(docs, toolsearch.Doc{
				Key: tool.Name, Name: tool.Name, Description: tool.Description,
				Params:  toolsearch.ParamsOf(tool.InputSchema),
				Backend: s.Name, BackendDescription: s.Description + " " + s.Category,
			})
		}
	}
	return docs, tasks
}

// TestLiveMCPBenchRecall scores the lexical index on LiveMCPBench's 95
// annotated tasks and pins the figures measured (deterministic): Recall@5
// 0.396, Recall@10 0.494, hit@3 0.564 (issue 31's target, 0.60, is not
// reached lexically; plain BM25 over name and description scores 0.25).
func TestLiveMCPBenchRecall(t *testing.T) {
	t.Parallel()
	docs, tasks := benchDocs(t)
	ix := toolsearch.Build(docs)
	names := map[string]bool{}
	for _, d := range docs {
		names[d.Name] = true
	}
	s := livemcpbench.Score(tasks, func(n string) bool { return names[n] }, func(q string) []string {
		var out []string
		for _, h := range ix.Search(q, 10, nil) {
			out = append(out, h.Key)
		}
		return out
	})
	t.Logf("LiveMCPBench: %d tools, %d tasks: Recall@5 %.3f Recall@10 %.3f hit@3 %.3f", len(docs), s.Tasks, s.Recall5, s.Recall10, s.Hit3)
	if s.Recall5 < 0.39 || s.Recall10 < 0.49 {
		t.Errorf("Recall@5 = %.3f, Recall@10 = %.3f, want ≥ 0.39 and ≥ 0.49", s.Recall5, s.Recall10)
	}
}
