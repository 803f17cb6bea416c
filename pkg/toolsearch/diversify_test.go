package toolsearch

import (
	"slices"
	"testing"
)

// TestTwoStepRequestFilledTopFiveWithOneStep: in a request of two parts,
// the fused ranking gave all five places to one part's tools (A1..A5) and
// none to the other's (B1, sixth); diversify keeps the first three and
// gives the fourth to B1, the part left unserved. A single part, or hits
// no longer than keepFirst, are left as they are.
func TestTwoStepRequestFilledTopFiveWithOneStep(t *testing.T) {
	t.Parallel()
	fused := []Hit{{0, "A1", 0.5}, {1, "A2", 0.45}, {2, "A3", 0.4}, {3, "A4", 0.35}, {4, "A5", 0.3}, {5, "B1", 0.29}}
	partA := []Hit{{0, "A1", 1}, {1, "A2", 0.95}, {2, "A3", 0.9}, {3, "A4", 0.85}, {4, "A5", 0.8}}
	partB := []Hit{{5, "B1", 2}}
	got := keyOf(diversify(slices.Clone(fused), [][]Hit{partA, partB}, []float64{1, 1}, 5))
	if want := []string{"A1", "A2", "A3", "B1", "A4", "A5"}; !slices.Equal(got, want) {
		t.Errorf("diversify = %v, want %v", got, want)
	}
	if got := keyOf(diversify(slices.Clone(fused), [][]Hit{partA}, []float64{1}, 5)); !slices.Equal(got, keyOf(fused)) {
		t.Errorf("one part: %v, want the fused order", got)
	}
	if got := keyOf(diversify(slices.Clone(fused[:3]), [][]Hit{partA, partB}, []float64{1, 1}, 5)); !slices.Equal(got, keyOf(fused[:3])) {
		t.Errorf("three hits: %v, want the fused order", got)
	}
}
