package toolsearch_test

import (
	"encoding/json"
	"os"
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

// TestUserQueriesTop3 scores testdata/user_queries.json (written apart
// from the benchmark's tasks, before any tuning, and not tuned on) and pins
// the count with a right tool in the first 3: 30 of 35 before WordNet and
// literals, 32 before unknown.go and the synonyms its misses suggested
// (tuned on since, by those), 34 now.
func TestUserQueriesTop3(t *testing.T) {
	t.Parallel()
	docs, _ := benchDocs(t)
	b, err := os.ReadFile("testdata/user_queries.json")
	if err != nil {
		t.Fatal(err)
	}
	var qs []userQuery
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	hits := top3(t, toolsearch.Build(docs), qs)
	t.Logf("user queries top-3: %d of %d", hits, len(qs))
	if hits < 34 {
		t.Errorf("user queries top-3: %d of %d, want ≥ 34", hits, len(qs))
	}
}

// TestHeldOutQueriesTop3 scores test/livemcpbench/heldout.json (45
// single-intent requests in users' words, written for issue 31 before the
// ranking was tuned) and pins the count with a right
// tool in the first 3: 40 of 45 with each backend's description as its
// server sends it (41 of 45 with the catalogue's category beside it, as
// this test had it before; no server sends a category); 43 of 45 with
// unknown.go, the arithmetic step and the synonyms the three sets' misses
// suggested (tuned on since, by those); 44 once a follow-up of a word or
// two is read with the part before it (query.go).
func TestHeldOutQueriesTop3(t *testing.T) {
	t.Parallel()
	docs, _ := benchDocs(t)
	b, err := os.ReadFile("../../test/livemcpbench/heldout.json")
	if err != nil {
		t.Fatal(err)
	}
	var qs []userQuery
	if err := json.Unmarshal(b, &qs); err != nil {
		t.Fatal(err)
	}
	hits := top3(t, toolsearch.Build(docs), qs)
	t.Logf("held-out queries top-3: %d of %d", hits, len(qs))
	if hits < 44 {
		t.Errorf("held-out queries top-3: %d of %d, want ≥ 44", hits, len(qs))
	}
}

// TestFreshQueriesTop3 scores testdata/fresh_queries.json (32 single-intent
// requests in users' words, written for issue 31's recall work before
// their rankings were looked at, over tools the other sets leave out; not
// tuned on) and pins the count with a right tool in the first 3: 27 of 32
// (84%) as first measured, 29 of 32 with unknown.go and the synonyms the
// sets' misses suggested (tuned on since, by those).
func TestFreshQueriesTop3(t *testing.T) {
	t.Parallel()
	pinTop3(t, "testdata/fresh_queries.json", 29)
}

// TestFresh2QueriesTop3 scores testdata/fresh2_queries.json (50
// single-intent requests in users' words, one per server, written by a
// helper who saw only the catalogue, after unknown.go and its synonyms
// were made): 36 of 50 before them and 36 at first with them (the lodging
// request gained; "my sister Ana" lost, read as "analysis"); 38 once
// prefixes need 4 bytes, an arithmetic request's numbers are blanked and
// "whats", "im", "pls" count as phrasing; 41 with shorthand.go, the
// literal kinds and the synonyms fresh3's misses suggested; 42 once a
// media file's kind is said; 45 with fresh6's chat words (wiki, grep,
// preprint, antd).
func TestFresh2QueriesTop3(t *testing.T) {
	t.Parallel()
	pinTop3(t, "testdata/fresh2_queries.json", 45)
}

// TestFresh3QueriesTop3 scores testdata/fresh3_queries.json (60
// single-intent requests, two thirds in indirect everyday words, one per
// server, written by a helper who saw only the catalogue): 34 of 60 (57%)
// as first measured, with shorthand.go already made; 49 once its misses
// suggested idioms, literal kinds (IP and email addresses, scheme-less
// URLs, Maven coordinates, file names) and synonyms (tuned on since); 47
// with glossary.go (a Chinese request for train tickets and an antd
// example lost to tools whose Chinese descriptions grew English words);
// 48 with fresh6's chat words; 49 once "next" counted for nothing.
func TestFresh3QueriesTop3(t *testing.T) {
	t.Parallel()
	pinTop3(t, "testdata/fresh3_queries.json", 49)
}

// TestFresh4QueriesTop3 scores testdata/fresh4_queries.json (60
// single-intent requests, 40% plain and 60% in everyday words, one per
// server, written by another helper who saw only the catalogue, after
// fresh3's changes): 48 of 60 with the code before them, 50 (83%) with
// them, as first measured; 51 once number words ("one bitcoin") named no
// capability (tuned on since); 53 with glossary.go; 54 once a media
// file's kind ("png" → image) is said; 55 once a follow-up of a word or
// two is read with the part before it; 56 with fresh6's chat words.
func TestFresh4QueriesTop3(t *testing.T) {
	t.Parallel()
	pinTop3(t, "testdata/fresh4_queries.json", 56)
}

// TestFresh5QueriesTop3 scores testdata/fresh5_queries.json (60
// single-intent requests, one per server, mostly for a server's less
// obvious tools, seven in Chinese, written by a third helper who saw only
// the catalogue, after glossary.go): 48 of 60 with this set's first
// code, 50 (83%) as first measured; 52 once a media file's kind, an AS
// number and "3pm" counted (tuned on since); 54 once a follow-up of a
// word or two is read with the part before it; 55 once the commonest
// coins' names say they are cryptocurrencies; 56 once a URL said
// "content".
func TestFresh5QueriesTop3(t *testing.T) {
	t.Parallel()
	pinTop3(t, "testdata/fresh5_queries.json", 56)
}

// TestFresh6QueriesTop3 scores testdata/fresh6_queries.json (60
// single-intent requests for tools drawn at random over the servers, half
// in indirect words, some with typos, written by a fourth helper who saw
// only the catalogue): 39 of 60 (65%) as first measured; 46 once a URL
// said "content", a non-web URL's scheme was read, "set up" stopped
// meaning create, and chat words (pom, wiki, grep, rundown, preprint,
// raffle, "swap out", "left off", 网上) were read (tuned on since); 47
// once a PDF at a path to summarize is read first.
func TestFresh6QueriesTop3(t *testing.T) {
	t.Parallel()
	pinTop3(t, "testdata/fresh6_queries.json", 47)
}

// TestFresh7QueriesTop3 scores testdata/fresh7_queries.json (60
// single-intent requests for tools drawn at random from all 527, 60% in
// indirect words, written by a fifth helper who saw only the catalogue):
// 37 of 60 (62%) as first measured; 42 once chop/chunk meant split,
// tap/press click, attach upload, "disk space" and "up space" size, "last
// modified" info, and a character encoding's name said "text encoding"
// (tuned on since); 43 once 鸣潮 (Wuthering Waves) and 声骸 (echo) were
// glossed; 44 once "changed between" meant a diff; 45 once a number of 6
// digits or more said "id".
func TestFresh7QueriesTop3(t *testing.T) {
	t.Parallel()
	pinTop3(t, "testdata/fresh7_queries.json", 45)
}

// TestFresh8QueriesTop3 scores testdata/fresh8_queries.json (60
// single-intent requests for tools drawn at random from all 527, half in
// indirect words, three in Chinese, written by a sixth helper who saw only
// the catalogue, after fresh6's and fresh7's changes): 40 of 60 (67%) as
// first measured; 43 once merge/combine/stitch, "valo", "tick off" and a
// number of 6 digits or more ("id") were read (tuned on since; "forget"
// as delete, read with them, changed nothing and was dropped).
func TestFresh8QueriesTop3(t *testing.T) {
	t.Parallel()
	pinTop3(t, "testdata/fresh8_queries.json", 43)
}

// TestFresh9QueriesTop3 scores testdata/fresh9_queries.json (60
// single-intent requests for tools drawn at random from all 527, half in
// indirect words, three in Chinese, written by a seventh helper who saw
// only the catalogue, after every change of this set's stop): 42 of 60
// (70%) as first measured; not tuned on.
func TestFresh9QueriesTop3(t *testing.T) {
	t.Parallel()
	pinTop3(t, "testdata/fresh9_queries.json", 42)
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
