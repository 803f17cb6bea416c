package livemcpbench

// Scores are a tool search's figures over a task set: Recall@5 and
// Recall@10 (the share of each task's annotated tools present in the
// catalogue found among the first k results, averaged over the tasks that
// have any), Hit@3 (the share of those tasks with an annotated tool among
// the first 3) and the number of tasks scored.
type Scores struct {
	Recall5, Recall10, Hit3 float64
	Tasks                   int
}

// Score runs search (a question → tool names, best first, at least 10 when
// there are) over tasks; present reports whether a tool name is in the
// catalogue (annotated tools that are not are left out).
func Score(tasks []Task, present func(string) bool, search func(string) []string) Scores {
	var s Scores
	for _, t := range tasks {
		want := map[string]bool{}
		for _, n := range t.Tools {
			if present(n) {
				want[n] = true
			}
		}
		if len(want) == 0 {
			continue
		}
		got := search(t.Question)
		s.Recall5 += found(got, want, 5)
		s.Recall10 += found(got, want, 10)
		if found(got, want, 3) > 0 {
			s.Hit3++
		}
		s.Tasks++
	}
	if s.Tasks > 0 {
		n := float64(s.Tasks)
		s.Recall5, s.Recall10, s.Hit3 = s.Recall5/n, s.Recall10/n, s.Hit3/n
	}
	return s
}

// found is the share of want among the first k of got (each name once).
func found(got []string, want map[string]bool, k int) float64 {
	seen := map[string]bool{}
	for i, n := range got {
		if i == k {
			break
		}
		if want[n] {
			seen[n] = true
		}
	}
	return float64(len(seen)) / float64(len(want))
}
