package toolsearch_test

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
)

var smallCatalogue = []toolsearch.Doc{
	{Key: "fs__readFile", Name: "readFile", Description: "Read the contents of a file from disk.", Params: []toolsearch.Param{{Name: "path", Description: "File path"}}, Backend: "fs", BackendDescription: "Local filesystem"},
	{Key: "fs__delete_dir", Name: "delete_dir", Description: "Delete a directory recursively.", Backend: "fs"},
	{Key: "img__resize-image", Name: "resize-image", Description: "Resize an image to the given width and height.", Params: []toolsearch.Param{{Name: "widthPx"}}, Backend: "images"},
	{Key: "wx__get_forecast", Name: "get_forecast", Description: "Weather forecast for a city.", Params: []toolsearch.Param{{Name: "city", Description: "City name"}}, Backend: "weather"},
	{Key: "gh__search_repositories", Name: "search_repositories", Description: "Search GitHub repositories by keyword.", Backend: "github", BackendDescription: "GitHub API"},
	{Key: "ss__bing_search", Name: "bing_search", Description: "使用必应搜索指定的关键词", Backend: "bing"},
}

func keys(hs []toolsearch.Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Key)
	}
	return out
}

// TestSearchFindsByUsersWords: split names, stems, synonyms, parameter and
// backend words each bring the one right tool first.
func TestSearchFindsByUsersWords(t *testing.T) {
	t.Parallel()
	ix := toolsearch.Build(smallCatalogue)
	for q, want := range map[string]string{
		"read file":                               "fs__readFile", // camelCase name
		"remove a folder":                         "fs__delete_dir",
		"make my pictures smaller, width":         "img__resize-image", // synonym + parameter word split from widthPx
		"will it rain in Paris tomorrow? weather": "wx__get_forecast",
		"find a repo on github":                   "gh__search_repositories",
		"必应":                                      "ss__bing_search", // Han characters as words
	} {
		got := ix.Search(q, 3, nil)
		if len(got) == 0 || got[0].Key != want {
			t.Errorf("Search(%q) = %v, want %s first", q, keys(got), want)
		}
	}
}

// TestSearchAllowHidesDocuments: a document allow refuses never appears,
// however well it matches, and the limit still fills from the rest.
func TestSearchAllowHidesDocuments(t *testing.T) {
	t.Parallel()
	ix := toolsearch.Build(smallCatalogue)
	got := ix.Search("read file directory", 2, func(doc int) bool { return smallCatalogue[doc].Key != "fs__readFile" })
	for _, h := range got {
		if h.Key == "fs__readFile" {
			t.Fatalf("hidden tool returned: %v", keys(got))
		}
	}
	if len(got) == 0 || got[0].Key != "fs__delete_dir" {
		t.Fatalf("got %v, want fs__delete_dir first", keys(got))
	}
}

// TestSearchNoWordsNoHits: stop words alone and an empty index find nothing.
func TestSearchNoWordsNoHits(t *testing.T) {
	t.Parallel()
	if got := toolsearch.Build(smallCatalogue).Search("please help me with the", 5, nil); len(got) != 0 {
		t.Fatalf("got %v", keys(got))
	}
	if got := toolsearch.Build(nil).Search("file", 5, nil); len(got) != 0 {
		t.Fatalf("got %v", keys(got))
	}
}

// TestSearchOrderIsDeterministic: equal scores are ordered by Doc.
func TestSearchOrderIsDeterministic(t *testing.T) {
	t.Parallel()
	docs := []toolsearch.Doc{{Key: "b", Name: "echo"}, {Key: "a", Name: "echo"}, {Key: "c", Name: "echo"}}
	got := keys(toolsearch.Build(docs).Search("echo", 5, nil))
	if !reflect.DeepEqual(got, []string{"b", "a", "c"}) {
		t.Fatalf("got %v", got)
	}
}

// TestParamsOf reads the top-level properties of each schema form.
func TestParamsOf(t *testing.T) {
	t.Parallel()
	want := []toolsearch.Param{{Name: "a", Description: "first"}, {Name: "b", Description: "B title"}}
	for _, s := range []any{
		map[string]any{"type": "object", "properties": map[string]any{"b": map[string]any{"title": "B title"}, "a": map[string]any{"description": "first"}}},
		[]byte(`{"properties":{"a":{"description":"first"},"b":{"title":"B title"}}}`),
	} {
		if got := toolsearch.ParamsOf(s); !reflect.DeepEqual(got, want) {
			t.Errorf("ParamsOf(%v) = %v", s, got)
		}
	}
	if got := toolsearch.ParamsOf("not a schema"); len(got) != 0 {
		t.Errorf("got %v", got)
	}
}

// synthetic returns n tools: the LiveMCPBench catalogue repeated under
// distinct keys, or a generated one when the data is absent.
func synthetic(b testing.TB, n int) []toolsearch.Doc {
	base, _ := benchDocs(b)
	out := make([]toolsearch.Doc, n)
	for i := range out {
		d := base[i%len(base)]
		d.Key = fmt.Sprintf("%s_%d", d.Key, i)
		d.Backend = fmt.Sprintf("%s%d", d.Backend, i/len(base))
		out[i] = d
	}
	return out
}

// BenchmarkBuild10k: an index rebuild at 10,000 tools (issue 31: ≤ 100 ms).
func BenchmarkBuild10k(b *testing.B) {
	docs := synthetic(b, 10000)
	for b.Loop() {
		toolsearch.Build(docs)
	}
}

// distinct is synthetic(n) with every description and parameter text made
// distinct, as in a catalogue that repeats none.
func distinct(b *testing.B, n int) []toolsearch.Doc {
	docs := synthetic(b, n)
	for i := range docs {
		docs[i].Description += fmt.Sprintf(" v%d", i)
		docs[i].Params = slices.Clone(docs[i].Params)
		for j := range docs[i].Params {
			docs[i].Params[j].Description += fmt.Sprintf(" v%d", i)
		}
	}
	return docs
}

// BenchmarkBuild10kDistinct: a first build of 10,000 distinct tools.
func BenchmarkBuild10kDistinct(b *testing.B) {
	docs := distinct(b, 10000)
	for b.Loop() {
		toolsearch.Build(docs)
	}
}

// BenchmarkRebuild10k: the rebuild after a catalogue change (one backend
// of 50 tools replaced by another) at 10,000 distinct tools, which
// analyses only the new backend's tools (issue 31: ≤ 100 ms).
func BenchmarkRebuild10k(b *testing.B) {
	docs := distinct(b, 10050)
	a, c := docs[:10000], slices.Concat(docs[:9950], docs[10000:])
	bl := toolsearch.NewBuilder()
	bl.Build(a)
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			bl.Build(c)
		} else {
			bl.Build(a)
		}
	}
}

// TestBuilderRebuildFindsWhatBuildFinds: a Builder's rebuild after a
// change ranks exactly as a fresh Build of the new catalogue.
func TestBuilderRebuildFindsWhatBuildFinds(t *testing.T) {
	t.Parallel()
	bl := toolsearch.NewBuilder()
	bl.Build(smallCatalogue[:4])
	next := slices.Concat(smallCatalogue[2:], []toolsearch.Doc{{Key: "x__rm", Name: "rm", Description: "Delete files.", Backend: "x"}})
	got, want := bl.Build(next), toolsearch.Build(next)
	for _, q := range []string{"delete a directory", "weather forecast", "search repositories", "resize image", "files"} {
		if g, w := got.Search(q, 5, nil), want.Search(q, 5, nil); !reflect.DeepEqual(g, w) {
			t.Errorf("Search(%q): rebuild %v, fresh %v", q, g, w)
		}
	}
}

// BenchmarkSearch10k: one multi-part request against 10,000 tools.
func BenchmarkSearch10k(b *testing.B) {
	ix := toolsearch.Build(synthetic(b, 10000))
	for b.Loop() {
		ix.Search("Read the sales data in the spreadsheet, plot it as a bar chart and save it as png", 5, nil)
	}
}

// TestSearchPathMeansFile: a request naming a file path asks for a file
// tool, though it never says "file".
func TestSearchPathMeansFile(t *testing.T) {
	t.Parallel()
	ix := toolsearch.Build([]toolsearch.Doc{
		{Key: "notes__save_note", Name: "save_note", Description: "Save a note in the knowledge base.", Backend: "notes"},
		{Key: "fs__write_file", Name: "write_file", Description: "Create a new file or overwrite an existing one with new content.",
			Params: []toolsearch.Param{{Name: "path"}, {Name: "content"}}, Backend: "fs"},
	})
	got := ix.Search("save the summary to /root/out/summary.md", 2, nil)
	if len(got) == 0 || got[0].Key != "fs__write_file" {
		t.Fatalf("got %v, want fs__write_file first", keys(got))
	}
	if got := ix.Search("save the summary as a note", 2, nil); len(got) == 0 || got[0].Key != "notes__save_note" {
		t.Fatalf("without a path: got %v, want notes__save_note first", keys(got))
	}
}

// TestSearchLiteralsAreNotIntents: the folders of a path, a URL's path and
// a blob are the user's names, not words for a tool; what kind of thing
// each is (a file of some type, a directory, a site's page, a domain) is.
func TestSearchLiteralsAreNotIntents(t *testing.T) {
	t.Parallel()
	ix := toolsearch.Build([]toolsearch.Doc{
		{Key: "music__analyze_tempo", Name: "analyze_tempo", Description: "Estimate the tempo of a music track.", Backend: "music"},
		{Key: "fs__list_directory", Name: "list_directory", Description: "List the files of a directory.", Backend: "fs"},
		{Key: "yt__get_transcript", Name: "get_transcript", Description: "Get the transcript of a YouTube video.", Backend: "youtube"},
		{Key: "whois__whois_domain", Name: "whois_domain", Description: "Who registered a domain name.", Backend: "whois"},
		{Key: "watch__watch_stream", Name: "watch_stream", Description: "Watch a stream for new events.", Backend: "watch"},
	})
	wantFirst(t, ix, 2, map[string]string{
		"What files are in my /root/music folder?":                                                                         "fs__list_directory",
		"Summarize https://www.youtube.com/watch?v=arj7oStGLkU":                                                            "yt__get_transcript",
		"who registered example.com":                                                                                       "whois__whois_domain",
		"what is this: iVBORw0KGgoAAAANSUhEUgAAAgAAAAIACAYAAAD0eNT6AA music":                                               "music__analyze_tempo",
		"what is this: iVBORw0KGgoAAAANSUhEUgAAAgAAAAIA/WeatherForecastVideoTranscriptAAAAAAAAAAAAAAAAAAAAAAAAA+Zbw music": "music__analyze_tempo",
	})
}

// wantFirst fails t for each query of cases (query → key) whose first hit
// among limit is not its key.
func wantFirst(t *testing.T, ix *toolsearch.Index, limit int, cases map[string]string) {
	t.Helper()
	for q, want := range cases {
		if got := ix.Search(q, limit, nil); len(got) == 0 || got[0].Key != want {
			t.Errorf("Search(%q) = %v, want %s first", q, keys(got), want)
		}
	}
}

// TestSearchWordNetExpands: a word only WordNet relates to the tool's
// ("dinner" is a "meal") finds it.
func TestSearchWordNetExpands(t *testing.T) {
	t.Parallel()
	ix := toolsearch.Build([]toolsearch.Doc{
		{Key: "geo__suggest_meeting_point", Name: "suggest_meeting_point", Description: "Suggest a place to meet.", Backend: "geo"},
		{Key: "cook__recommend_meals", Name: "recommend_meals", Description: "Recommend meals for the week.", Backend: "cook"},
	})
	if got := ix.Search("what is for dinner tonight", 2, nil); len(got) == 0 || got[0].Key != "cook__recommend_meals" {
		t.Fatalf("got %v, want cook__recommend_meals first", keys(got))
	}
}

// TestSearchDescriptionLeadSaysWhatAToolDoes: a tool whose first sentence
// states the request outranks one that mentions it in passing, even when
// the first's description goes on at length (its Args, its caveats).
func TestSearchDescriptionLeadSaysWhatAToolDoes(t *testing.T) {
	t.Parallel()
	ix := toolsearch.Build([]toolsearch.Doc{
		{Key: "kb__archive", Name: "archive", Description: "Manages archives. It can also delete a note.", Backend: "kb"},
		{Key: "kb__purge", Name: "purge", Description: "Deletes a note by its title. " + strings.Repeat("The title must match exactly, including case and spacing. ", 3), Backend: "kb"},
	})
	if got := ix.Search("delete a note", 2, nil); len(got) == 0 || got[0].Key != "kb__purge" {
		t.Fatalf("got %v, want kb__purge first", keys(got))
	}
}

// TestComparisonFoundNoCompareTool: Snowball stems "comparison" and
// "compare" apart, so a request for a comparison found no tool that
// compares; WordNet's derivationally related words (wordnet.txt's fourth
// column) relate them.
func TestComparisonFoundNoCompareTool(t *testing.T) {
	t.Parallel()
	ix := toolsearch.Build([]toolsearch.Doc{
		{Key: "text__compare_files", Name: "compare_files", Description: "Compare two files line by line.", Backend: "text"},
		{Key: "text__examine_file", Name: "examine_file", Description: "Examine a file's metadata.", Backend: "text"},
	})
	if got := ix.Search("a comparison of my logs", 2, nil); len(got) == 0 || got[0].Key != "text__compare_files" {
		t.Fatalf("got %v, want text__compare_files first", keys(got))
	}
}

// TestOrdinalInARequestFoundATaskTool: "next" (like "first", "third") is a
// place in an order, not a capability, but a task manager's get_next_task
// took the first place for "when does T1 play next?".
func TestOrdinalInARequestFoundATaskTool(t *testing.T) {
	t.Parallel()
	ix := toolsearch.Build([]toolsearch.Doc{
		{Key: "get_next_task", Name: "get_next_task", Description: "Get the next pending task of a request.", Backend: "tasks"},
		{Key: "team_schedule", Name: "team_schedule", Description: "Upcoming match schedule of an esports team: when it plays.", Backend: "esports"},
		{Key: "team_roster", Name: "team_roster", Description: "Players of an esports team.", Backend: "esports"},
	})
	wantFirst(t, ix, 3, map[string]string{
		"when does T1 play next?":         "team_schedule",
		"what's the first match T1 plays": "team_schedule",
	})
}

// TestArithmeticOnBigNumbersFoundIdTools: a number of 6 digits or more
// reads as an id, so "what is 1234567 * 3" found tools that get a story
// by its id before the calculator; "times" between numbers found clocks
// ("time"). In a request for arithmetic, numbers and operation words are
// the calculation's, not words.
func TestArithmeticOnBigNumbersFoundIdTools(t *testing.T) {
	t.Parallel()
	ix := toolsearch.Build([]toolsearch.Doc{
		{Key: "calculate", Name: "calculate", Description: "Calculate the result of a mathematical expression.", Backend: "calc"},
		{Key: "getStory", Name: "getStory", Description: "Get a single story by ID", Backend: "hn"},
		{Key: "get_card_by_id", Name: "get_card_by_id", Description: "Get a card by its id.", Backend: "cards"},
		{Key: "get_current_time", Name: "get_current_time", Description: "Get the current time in a timezone.", Backend: "clock"},
		{Key: "convert_time", Name: "convert_time", Description: "Convert a time between timezones.", Backend: "clock"},
	})
	wantFirst(t, ix, 3, map[string]string{
		"what is 1234567 * 3":         "calculate",
		"1234567 times 89":            "calculate",
		"how much is 17% of 2340000":  "calculate",
		"pull up hn story 39281234":   "getStory",
		"what is 123456 + 654321 - 1": "calculate",
	})
}
