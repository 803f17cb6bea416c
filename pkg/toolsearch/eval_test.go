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
// the half tuned on, and at odd ones, held out), and pins the figures
// measured (deterministic), with each backend's description as its server
// gives it (tools.json's, which the bench's servers send in serverInfo):
// Recall@5 0.577, Recall@10 0.686, hit@3 0.660; tuned half 0.581/0.718/0.681,
// held-out half 0.573/0.654/0.638 (0.574/0.683, tuned half 0.576/0.712,
// before a tour or an itinerary implied places, implied.go; Recall@10 0.673, tuned half 0.691,
// before 鸣潮's words were glossed; 0.562/0.656/0.660, halves 0.557 and
// 0.566, before a relative date asked for a clock for a timezone,
// implied.go; 0.559, tuned half 0.552, before
// "next", "first" and "third" counted for nothing, query.go; 0.555, tuned half 0.545, before a URL
// said "content", literal.go; 0.545/0.646/0.660, halves 0.545 and
// 0.544, before a report at a text file's path implied writing it,
// implied.go; 0.539/0.628/0.638, halves 0.534 and
// 0.544, before a follow-up of a word or two was read with the part
// before it, query.go; 0.541/0.626/0.638, halves 0.538 and
// 0.544, before a media file's kind was said, literal.go; 0.538/0.623/0.638, halves 0.538 and
// 0.537, before "create" with a path implied writing a file, implied.go;
// 0.513/0.608/0.617, halves 0.539 and
// 0.488, before Chinese descriptions were glossed, glossary.go;
// 0.509/0.606/0.617, halves 0.539 and 0.480, before number words counted
// for nothing; 0.505/0.590/0.617, halves 0.535 and
// 0.475, before saving to an office file's path implied creating that
// format's document, implied.go; 0.496/0.572/0.617, halves 0.524 and
// 0.468, before a relative date brought a clock as an aside, implied.go;
// 0.487/0.564/0.606, halves 0.514 and 0.461, before a found tool lifted the
// tools of its server it names, prereq.go; tuned half 0.510 before WordNet's
// derivations were expansions too; 0.465/0.551/0.606, halves 0.480 and 0.450,
// before a multi-part request's hits were diversified over its parts,
// diversify.go; 0.436/0.514/0.574 before the steps a
// request implies were added as parts, implied.go; 0.431/0.509/0.574 before another
// server's copy of a tool found gave its place up, copies.go;
// 0.423/0.498/0.574 before a multi-part
// request's hits lifted their servers' other tools, siblings.go; 0.425 with
// the catalogue's category, which no server sends, beside the description;
// issue 31's target, 0.60, is not reached lexically; plain BM25 over name
// and description scores 0.25). TestRankingFigures logs Recall@1/3 and MRR.
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
	if s.Recall5 < 0.575 || s.Recall10 < 0.684 || s.Hit3 < 0.658 {
		t.Errorf("Recall@5 = %.3f, Recall@10 = %.3f, hit@3 = %.3f, want ≥ 0.575, ≥ 0.684 and ≥ 0.658", s.Recall5, s.Recall10, s.Hit3)
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
