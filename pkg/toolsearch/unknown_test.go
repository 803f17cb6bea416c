package toolsearch_test

import (
	"slices"
	"testing"

	"github.com/vmcp/vmcp/pkg/toolsearch"
)

// usersWordsCatalogue holds, for each request below, the right tool and one
// that shares the request's other words.
var usersWordsCatalogue = []toolsearch.Doc{
	{Key: "generate_flow_diagram", Name: "generate_flow_diagram", Description: "Generate a flow diagram of a process from its steps.", Backend: "charts"},
	{Key: "drawing_fillRectangle", Name: "drawing_fillRectangle", Description: "Draw and fill a rectangle on the canvas.", Backend: "canvas"},
	{Key: "get_weather_information", Name: "get_weather_information", Description: "Get detailed weather information for a city.", Backend: "weather"},
	{Key: "get_weather_alerts", Name: "get_weather_alerts", Description: "Get weather alerts for a region.", Backend: "weather"},
	{Key: "calculate", Name: "calculate", Description: "Evaluate a mathematical expression.", Params: []toolsearch.Param{{Name: "expression"}}, Backend: "math"},
	{Key: "get_asset_price", Name: "get_asset_price", Description: "Get the latest price of an asset such as gold or a stock.", Backend: "market"},
	{Key: "airbnb_search", Name: "airbnb_search", Description: "Search for Airbnb listings in a city for given dates.", Backend: "airbnb"},
	{Key: "get-9to5mac-news", Name: "get-9to5mac-news", Description: "Get the latest Apple news from 9to5Mac.", Backend: "news"},
	{Key: "research-token", Name: "research-token", Description: "Research a crypto token's team and market.", Backend: "crypto"},
	{Key: "read_pdf", Name: "read_pdf", Description: "Read one PDF file.", Backend: "pdf"},
	{Key: "find_nearby_places", Name: "find_nearby_places", Description: "Find places near a location.", Backend: "maps"},
}

// TestUsersWordsTheCatalogueLacksFoundNothing: a request in words no tool
// has found the wrong tool or nothing at all: a compound written as one
// word ("flowchart"), an abbreviation ("info"), a typing slip ("wheather"),
// a word made on an indexed one ("tokenomics"), a number as a word ("one"),
// arithmetic ("17% of
// 2340": numbers only), "worth" for a price, "somewhere to stay" for a
// lodging. Each now finds its tool first.
func TestUsersWordsTheCatalogueLacksFoundNothing(t *testing.T) {
	t.Parallel()
	wantFirst(t, toolsearch.Build(usersWordsCatalogue), 3, map[string]string{
		"draw a flowchart of the signup process":  "generate_flow_diagram",
		"tokenomics of PENDLE":                    "research-token",
		"how much is one bitcoin worth right now": "get_asset_price", // "one" named no capability
		"weather info for Oslo":                   "get_weather_information",
		"wheather in Oslo":                        "get_weather_alerts",
		"what is 17% of 2340":                     "calculate",
		"12.5 * 4":                                "calculate",
		"how much is my gold worth":               "get_asset_price",
		"somewhere to stay in Lisbon":             "airbnb_search",
		"whats 17.5% of 2,340":                    "calculate", // digits would find "9to5mac"
	})
}

// TestDatesAndRangesAreNotArithmetic: a date, a range or a path with
// digits implies no calculation.
func TestDatesAndRangesAreNotArithmetic(t *testing.T) {
	t.Parallel()
	ix := toolsearch.Build(usersWordsCatalogue)
	for _, q := range []string{"weather alerts for 2026-05-01", "weather alerts 1/2 of the region", "places near 5th avenue 10-12"} {
		for _, h := range ix.Search(q, 5, nil) {
			if h.Key == "calculate" {
				t.Errorf("Search(%q) = %v: no arithmetic asked", q, keys(ix.Search(q, 5, nil)))
			}
		}
	}
}

// TestANameWasReadAsAnAbbreviation: "Ana" (a person) was read as the
// beginning of "analysis" and found analysis tools; a prefix needs 4 bytes.
func TestANameWasReadAsAnAbbreviation(t *testing.T) {
	t.Parallel()
	docs := append([]toolsearch.Doc{{Key: "analyze_commute", Name: "analyze_commute", Description: "Analyze a commute.", Backend: "maps"},
		{Key: "add_observations", Name: "add_observations", Description: "Remember facts: add observations to entities.", Backend: "memory"}},
		usersWordsCatalogue...)
	got := toolsearch.Build(docs).Search("remember that my sister Ana is allergic to peanuts", 5, nil)
	if len(got) == 0 || got[0].Key != "add_observations" || slices.ContainsFunc(got, func(h toolsearch.Hit) bool { return h.Key == "analyze_commute" }) {
		t.Fatalf("got %v, want add_observations first and no analysis tool", keys(got))
	}
}
