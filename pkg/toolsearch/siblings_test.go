package toolsearch

import (
	"slices"
	"testing"
)

// TestSiblingOfTheBestHitWasOutranked: of two hits scored alike, the one
// whose backend has the best hit comes first after siblings (it came
// second, by document order, before), and the hits are cut to the limit;
// a document not among the hits (hidden from the principal) lifts none.
func TestSiblingOfTheBestHitWasOutranked(t *testing.T) {
	t.Parallel()
	ix := Build([]Doc{
		{Key: "maps_nearby", Name: "nearby", Backend: "maps"},
		{Key: "charts_pin", Name: "pin", Backend: "charts"},
		{Key: "maps_pin", Name: "pin", Backend: "maps"},
	})
	hits := []Hit{{0, "maps_nearby", 1}, {1, "charts_pin", 0.5}, {2, "maps_pin", 0.5}}
	if got := keyOf(ix.siblings(slices.Clone(hits), 2)); !slices.Equal(got, []string{"maps_nearby", "maps_pin"}) {
		t.Errorf("siblings = %v, want maps_nearby, maps_pin", got)
	}
	if got := keyOf(ix.siblings(slices.Clone(hits[1:]), 2)); !slices.Equal(got, []string{"charts_pin", "maps_pin"}) {
		t.Errorf("without maps_nearby: %v, want charts_pin, maps_pin", got)
	}
}

func keyOf(hs []Hit) []string {
	var out []string
	for _, h := range hs {
		out = append(out, h.Key)
	}
	return out
}
