package toolsearch

import (
	"strings"
	"testing"
)

// TestAFollowUpWasRankedAsAPartOfItsOwn: a request's follow-up of a word
// or two ("example pls", "how heavy is it") was a part of its own, so the
// tools of that word alone took the request's places (edit_block for
// "block out past dates? example pls"). It is now read with the part
// before it; a part that names a step of its own still stands alone.
func TestAFollowUpWasRankedAsAPartOfItsOwn(t *testing.T) {
	t.Parallel()
	for q, want := range map[string][]string{
		"antd DatePicker - how do i block out past dates? example pls": {"past dates example pls"},
		"will lodash bloat the build? how heavy is it":                 {"build how heavy"},
		"read the sheet, plot a bar chart and save it to ~/c.png":      {"read the sheet", "plot a bar chart", "save it to png"},
		"hi. find the weather in Oslo":                                 {"find the weather in Oslo"},
	} {
		got := clauses(literals(q, false))
		if len(got) != len(want) {
			t.Errorf("clauses(%q) = %q, want %d parts", q, got, len(want))
			continue
		}
		for i, w := range want {
			if !strings.Contains(got[i], w) {
				t.Errorf("clauses(%q)[%d] = %q, want it to hold %q", q, i, got[i], w)
			}
		}
	}
}
