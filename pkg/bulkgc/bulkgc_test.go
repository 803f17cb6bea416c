package bulkgc

import (
	"math"
	"slices"
	"testing"
)

// fake replaces the runtime's limit and memory reads for one test.
func fake(t *testing.T, configured int64, memory *int64) *[]int64 {
	t.Helper()
	limit, set := configured, []int64{}
	oldSet, oldRead, oldOn := setLimit, readMemory, enabled.Load()
	setLimit = func(v int64) int64 {
		prev := limit
		if v >= 0 {
			limit = v
			set = append(set, v)
		}
		return prev
	}
	readMemory = func() int64 { return *memory }
	enabled.Store(true)
	t.Cleanup(func() { setLimit, readMemory = oldSet, oldRead; enabled.Store(oldOn) })
	return &set
}

// TestCatalogueLoadLetTheHeapGrowUnbounded: while a catalogue loads, the
// memory limit follows the memory in use plus Headroom (the start-up peak
// of 10,000 tools was 80 MB RSS against 53 serving them), and the
// configured limit comes back when the last of overlapping phases ends.
func TestCatalogueLoadLetTheHeapGrowUnbounded(t *testing.T) {
	mem := int64(10 << 20)
	set := fake(t, math.MaxInt64, &mem)
	endA := Begin()
	endB := Begin() // a second backend listed at once
	mem = 20 << 20
	Step()
	endA()
	endA() // once only
	mem = 30 << 20
	Step()
	endB()
	Step() // outside a phase: nothing
	want := []int64{10<<20 + Headroom, 10<<20 + Headroom, 20<<20 + Headroom, 30<<20 + Headroom, math.MaxInt64}
	if got := *set; !slices.Equal(got, want) {
		t.Fatalf("limits set %v, want %v", got, want)
	}
}

// TestBulkPhaseRaisedAConfiguredLimit: a GOMEMLIMIT below what a phase
// would hold is kept.
func TestBulkPhaseRaisedAConfiguredLimit(t *testing.T) {
	mem := int64(100 << 20)
	set := fake(t, 64<<20, &mem)
	Begin()()
	if got, want := *set, []int64{64 << 20, 64 << 20}; !slices.Equal(got, want) {
		t.Fatalf("limits set %v, want %v", got, want)
	}
}

// TestBulkPhaseBeforeEnableSetALimit: a library user who did not Enable
// keeps its own GC settings.
func TestBulkPhaseBeforeEnableSetALimit(t *testing.T) {
	mem := int64(10 << 20)
	set := fake(t, math.MaxInt64, &mem)
	enabled.Store(false)
	Begin()()
	if len(*set) != 0 {
		t.Fatalf("limits set %v before Enable", *set)
	}
}

// TestInUseCountsTheLiveHeap reads the real runtime: what a phase holds is
// above the live heap and below all the memory the runtime has.
func TestInUseCountsTheLiveHeap(t *testing.T) {
	if n := inUse(); n <= 0 {
		t.Fatalf("inUse = %d", n)
	}
}

// TestSmallRefreshCollectedEarly: a refresh of a few hundred tools (a
// backend's list_changed while thousands of sessions are served) held the
// limit and made the collector run in the middle of the fan-out; a Phase
// holds it only from MinItems on.
func TestSmallRefreshCollectedEarly(t *testing.T) {
	mem := int64(10 << 20)
	set := fake(t, math.MaxInt64, &mem)
	var small Phase
	small.Add(MinItems - 1)
	small.End()
	if len(*set) != 0 {
		t.Fatalf("a phase of %d items set limits %v", MinItems-1, *set)
	}
	var large Phase
	large.Add(MinItems - 1)
	large.Add(1)
	large.Add(1)
	large.End()
	large.End()
	if got, want := *set, []int64{10<<20 + Headroom, 10<<20 + Headroom, math.MaxInt64}; !slices.Equal(got, want) {
		t.Fatalf("limits set %v, want %v", got, want)
	}
}
