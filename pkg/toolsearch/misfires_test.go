package toolsearch_test

import (
	"slices"
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// misfire is a request a rule read in the wrong sense: want must be among
// its first three hits (when set), and not must not be (nor be first,
// with first).
type misfire struct {
	query, want, not string
	first            bool
}

// TestRulesMisreadOtherSensesOfTheirWords pins the misreadings found by
// trying to break this stop's rules, each fixed: a URL of a bare site lost
// "domain" (whois), "next" dropped lost get_next_task, "wiki" made a
// company's wiki Wikipedia, "swap out" and "forget" and "things to do"
// and "review" implied edits, deletions, places and reading elsewhere, a
// report read from a text path implied writing it, a charset in a parse
// request put the converter first, and "1234567 - 89" read as an id.
func TestRulesMisreadOtherSensesOfTheirWords(t *testing.T) {
	t.Parallel()
	docs, _ := benchDocs(t)
	ix := toolsearch.Build(docs)
	for _, c := range []misfire{
		{query: "whois http://baidu.com", want: "whois_domain"},
		{query: "show me the next task", want: "get_next_task"},
		{query: "search our company wiki for the onboarding doc", not: "search_wikipedia"},
		{query: "swap out lodash for a smaller npm package", not: "edit_block"},
		{query: "what does the report in /root/sales.csv say about Q3", not: "write_file"},
		{query: "split the document /root/long.txt into 1000 character chunks", not: "write_file"},
		{query: "review and merge /root/a.pdf and /root/b.pdf", want: "pdf_merger", not: "read_pdf"},
		{query: "don't forget to buy milk tomorrow, add it to my tasks", not: "delete_task"},
		{query: "parse the UTF-8 json at /root/a.json", not: "text_encoding_converter", first: true},
		{query: "what are the things to do in my task list", not: "find_nearby_places"},
		{query: "what is 1234567 - 89", want: "calculate"},
		{query: "summarize file:///root/report.pdf", want: "read_pdf"},
	} {
		got := keys(ix.Search(c.query, 3, nil))
		notIn := got
		if c.first {
			notIn = got[:min(1, len(got))]
		}
		if c.want != "" && !slices.Contains(got, c.want) || c.not != "" && slices.Contains(notIn, c.not) {
			t.Errorf("Search(%q) = %v, want %q among the first 3 and not %q", c.query, got, c.want, c.not)
		}
	}
}
