package toolsearch_test

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// userQuery is one single-intent request of testdata/user_queries.json,
// phrased as a user might, with the LiveMCPBench tools that would do.
type userQuery struct {
	Query string   `json:"query"`
	Want  []string `json:"want"`
}

// top3 counts the queries with a wanted tool among the first 3, logging
// the misses.
func top3(t *testing.T, ix *toolsearch.Index, qs []userQuery) int {
	t.Helper()
	hits := 0
	for _, q := range qs {
		got := keys(ix.Search(q.Query, 3, nil))
		if slices.ContainsFunc(got, func(k string) bool { return slices.Contains(q.Want, k) }) {
			hits++
		} else {
			t.Logf("miss: %q → %v (want one of %v)", q.Query, got, q.Want)
		}
	}
	return hits
}

// querySets are the sets of single-intent requests in users' words, each
// with the LiveMCPBench tools that would do, and the count with a right
// tool in the first 3 that TestQuerySetsTop3 pins (measured, deterministic).
// user and heldout were written before any tuning; the fresh sets by
// helpers who saw only the catalogue, never the code. Each set is tuned
// on once measured; docs/arch/decisions.md has each set's first figure
// and what each change did to it.
var querySets = []struct {
	path string
	pin  int
}{
	{"testdata/user_queries.json", 34},           // 35 requests
	{"../../test/livemcpbench/heldout.json", 45}, // 45
	{"testdata/fresh_queries.json", 30},          // 32
	{"testdata/fresh2_queries.json", 44},         // 50, one per server
	{"testdata/fresh3_queries.json", 50},         // 60, two thirds in indirect words
	{"testdata/fresh4_queries.json", 56},         // 60
	{"testdata/fresh5_queries.json", 56},         // 60, a server's less obvious tools
	{"testdata/fresh6_queries.json", 47},         // 60, tools drawn at random over the servers
	{"testdata/fresh7_queries.json", 45},         // 60, tools drawn at random from all 527
	{"testdata/fresh8_queries.json", 44},         // 60, the same
	{"testdata/fresh9_queries.json", 47},         // 60, the same: 42 as first measured
	{"testdata/fresh10_queries.json", 48},        // 60, the same: 44 as first measured
	{"testdata/fresh11_queries.json", 49},        // 60, the same: 46 as first measured
}

// TestQuerySetsTop3 scores each of querySets over LiveMCPBench's catalogue
// and fails below its pin, logging the misses.
func TestQuerySetsTop3(t *testing.T) {
	t.Parallel()
	for _, set := range querySets {
		t.Run(filepath.Base(set.path), func(t *testing.T) {
			t.Parallel()
			pinTop3(t, set.path, set.pin)
		})
	}
}

// pinTop3 scores the query set at path over LiveMCPBench's catalogue and
// fails below want requests with a right tool in the first 3.
func pinTop3(t *testing.T, path string, want int) {
	t.Helper()
	docs, _ := benchDocs(t)
	qs := readQueries(t, path)
	hits := top3(t, toolsearch.Build(docs), qs)
	t.Logf("%s top-3: %d of %d", path, hits, len(qs))
	if hits < want {
		t.Errorf("%s top-3: %d of %d, want ≥ %d", path, hits, len(qs), want)
	}
}
