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
				Backend: s.Name, BackendDescription: s.Description,
			})
		}
	}
	return docs, tasks
}

// TestLiveMCPBenchRecall scores the lexical index on LiveMCPBench's 95
// annotated tasks, and on each half (tasks at even positions of tasks.json,
// the half tuned on, and at odd ones, held out), with each backend's
// description as its server gives it, and pins the figures measured
// (deterministic): Recall@5 0.615, Recall@10 0.685, hit@3 0.670; tuned half
// 0.656/0.710/0.723, held-out half 0.574/0.660/0.617. Issue 31's target is
// 0.60; plain BM25 over name and description scores 0.25.
// docs/arch/decisions.md has each change's figures.
func TestLiveMCPBenchRecall(t *testing.T) {
	t.Parallel()
	docs, tasks := benchDocs(t)
	ix := toolsearch.Build(docs)
	var halves [2][]livemcpbench.Task
	for i, task := range tasks {
		halves[i%2] = append(halves[i%2], task)
	}
	s := score(t, ix, docs, tasks)
	a, b := score(t, ix, docs, halves[0]), score(t, ix, docs, halves[1])
	t.Logf("LiveMCPBench: %d tools, %d tasks: Recall@5 %.3f Recall@10 %.3f hit@3 %.3f", len(docs), s.Tasks, s.Recall5, s.Recall10, s.Hit3)
	t.Logf("  tuned half: Recall@5 %.3f Recall@10 %.3f hit@3 %.3f; held-out half: Recall@5 %.3f Recall@10 %.3f hit@3 %.3f",
		a.Recall5, a.Recall10, a.Hit3, b.Recall5, b.Recall10, b.Hit3)
	if s.Recall5 < 0.613 || s.Recall10 < 0.683 || s.Hit3 < 0.668 {
		t.Errorf("Recall@5 = %.3f, Recall@10 = %.3f, hit@3 = %.3f, want ≥ 0.613, ≥ 0.683 and ≥ 0.668", s.Recall5, s.Recall10, s.Hit3)
	}
	if os.Getenv("TOOLSEARCH_MISSES") != "" { // tuning aid: the tuned half's misses
		for _, task := range halves[0] {
			got := keys(ix.Search(task.Question, 5, nil))
			t.Logf("%q\n   got %v\n  want %v", task.Question, got, task.Tools)
		}
	}
}

// score runs tasks through ix (Score's rules: tools absent from docs left out).
func score(t *testing.T, ix *toolsearch.Index, docs []toolsearch.Doc, tasks []livemcpbench.Task) livemcpbench.Scores {
	t.Helper()
	names := map[string]bool{}
	for _, d := range docs {
		names[d.Name] = true
	}
	return livemcpbench.Score(tasks, func(n string) bool { return names[n] }, func(q string) []string {
		return keys(ix.Search(q, 10, nil))
	})
}
