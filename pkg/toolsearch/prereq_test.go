package toolsearch

import (
	"slices"
	"testing"
)

// TestPrerequisiteNamedByAFoundToolWasNotLifted: a request for train
// tickets found the tickets tool but not the tools its description and
// parameters name as the source of its inputs (a station's code, today's
// date), though the request needs them; a name that is a common word
// ("search") names nothing, a tool of another server is not lifted, and
// neither is one the principal may not use.
func TestPrerequisiteNamedByAFoundToolWasNotLifted(t *testing.T) {
	t.Parallel()
	docs := []Doc{
		{Key: "rail_get-tickets", Name: "rail_get-tickets", Backend: "rail",
			Description: "Find train tickets between two stations. Run search first.",
			Params: []Param{
				{Name: "from", Description: "the departure station's code, from get-station-code-by-names"},
				{Name: "date", Description: "yyyy-mm-dd; get-current-date gives today's"},
			}},
		{Key: "rail_get-station-code-by-names", Name: "rail_get-station-code-by-names", Backend: "rail", Description: "Codes of stations by name."},
		{Key: "rail_get-current-date", Name: "rail_get-current-date", Backend: "rail", Description: "Today's date in Shanghai."},
		{Key: "rail_search", Name: "rail_search", Backend: "rail", Description: "Look up anything."},
		{Key: "bus_get-current-date", Name: "bus_get-current-date", Backend: "bus", Description: "Today's date."},
		{Key: "bus_tickets", Name: "bus_tickets", Backend: "bus", Description: "Bus tickets between two stops."},
		{Key: "air_tickets", Name: "air_tickets", Backend: "air", Description: "Plane tickets between two airports."},
	}
	ix := Build(docs)
	got := keyOf(ix.Search("train tickets from Beijing to Shanghai", 3, nil))
	want := []string{"rail_get-tickets", "rail_get-station-code-by-names", "rail_get-current-date"}
	if !slices.Equal(got, want) {
		t.Errorf("Search = %v, want %v", got, want)
	}
	hidden := func(d int) bool { return docs[d].Key != "rail_get-current-date" }
	got = keyOf(ix.Search("train tickets from Beijing to Shanghai", 5, hidden))
	if slices.Contains(got, "rail_get-current-date") || slices.Contains(got, "rail_search") ||
		slices.Contains(got, "bus_get-current-date") || !slices.Contains(got, "rail_get-station-code-by-names") {
		t.Errorf("with rail_get-current-date hidden: %v", got)
	}
}
