package toolsearch_test

import (
	"encoding/json"
	"os"
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// figures are a ranking's figures over a query set: Recall@k (the share of
// each query's wanted tools present in the catalogue found in the first k,
// averaged) for k = 1, 3, 5, 10, and the mean reciprocal rank of the first
// wanted tool (within the first 10).
type figures struct {
	r1, r3, r5, r10, mrr float64
	n                    int
}

// measure ranks each question of qs (→ wanted tools) with ix.
func measure(ix *toolsearch.Index, names map[string]bool, qs []userQuery) figures {
	var f figures
	for _, q := range qs {
		want := map[string]bool{}
		for _, w := range q.Want {
			if names[w] {
				want[w] = true
			}
		}
		if len(want) == 0 {
			continue
		}
		got := keys(ix.Search(q.Query, 10, nil))
		seen := map[string]bool{}
		first := 0
		for i, g := range got {
			if want[g] && !seen[g] {
				seen[g] = true
				if first == 0 {
					first = i + 1
				}
			}
			switch i + 1 {
			case 1:
				f.r1 += float64(len(seen)) / float64(len(want))
			case 3:
				f.r3 += float64(len(seen)) / float64(len(want))
			case 5:
				f.r5 += float64(len(seen)) / float64(len(want))
			}
		}
		f.r10 += float64(len(seen)) / float64(len(want))
		if first > 0 {
			f.mrr += 1 / float64(first)
		}
		f.n++
	}
	if f.n > 0 {
		n := float64(f.n)
		f.r1, f.r3, f.r5, f.r10, f.mrr = f.r1/n, f.r3/n, f.r5/n, f.r10/n, f.mrr/n
	}
	return f
}

// TestRankingFigures logs Recall@1/3/5/10 and MRR on LiveMCPBench's tasks
// (all, and the even and odd halves) and on the held-out and user query
// sets; TestLiveMCPBenchRecall and the Top3 tests pin them.
func TestRankingFigures(t *testing.T) {
	t.Parallel()
	docs, tasks := benchDocs(t)
	ix := toolsearch.Build(docs)
	names := map[string]bool{}
	for _, d := range docs {
		names[d.Name] = true
	}
	var all, halves [2][]userQuery
	for i, task := range tasks {
		q := userQuery{Query: task.Question, Want: task.Tools}
		all[0] = append(all[0], q)
		halves[i%2] = append(halves[i%2], q)
	}
	sets := []struct {
		name string
		qs   []userQuery
	}{{"tasks", all[0]}, {"tasks even", halves[0]}, {"tasks odd", halves[1]},
		{"held-out", readQueries(t, "../../test/livemcpbench/heldout.json")}, {"user", readQueries(t, "testdata/user_queries.json")},
		{"fresh", readQueries(t, "testdata/fresh_queries.json")}}
	for _, s := range sets {
		f := measure(ix, names, s.qs)
		t.Logf("%-10s n=%3d R@1 %.3f R@3 %.3f R@5 %.3f R@10 %.3f MRR %.3f", s.name, f.n, f.r1, f.r3, f.r5, f.r10, f.mrr)
	}
}

// readQueries reads a query set ([{"query", "want"}]).
func readQueries(t *testing.T, path string) []userQuery {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var qs []userQuery
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	return qs
}
