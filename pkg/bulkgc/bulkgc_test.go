package bulkgc

import (
	"math"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"
)

// fake is a Limiter of a fake limit and memory reads, for one test; the
// limits it sets are recorded in the slice returned.
func fake(configured int64, memory *int64) (*Limiter, *[]int64) {
	limit, set := configured, []int64{}
	l := &Limiter{readMemory: func() int64 { return *memory }}
	l.setLimit = func(v int64) int64 {
		prev := limit
		if v >= 0 {
			limit = v
			set = append(set, v)
		}
		return prev
	}
	return l, &set
}

// TestCatalogueLoadLetTheHeapGrowUnbounded: while a catalogue loads, the
// memory limit follows the memory in use plus Headroom (the start-up peak
// of 10,000 tools was 80 MB RSS against 53 serving them), and the
// configured limit comes back when the last of overlapping phases ends.
func TestCatalogueLoadLetTheHeapGrowUnbounded(t *testing.T) {
	t.Parallel()
	mem := int64(10 << 20)
	l, set := fake(math.MaxInt64, &mem)
	endA := l.begin()
	endB := l.begin() // a second backend listed at once
	mem = 20 << 20
	l.hold()
	endA()
	endA() // once only
	mem = 30 << 20
	l.hold()
	endB()
	l.hold() // outside a phase: nothing
	want := []int64{10<<20 + Headroom, 10<<20 + Headroom, 20<<20 + Headroom, 30<<20 + Headroom, math.MaxInt64}
	if got := *set; !slices.Equal(got, want) {
		t.Fatalf("limits set %v, want %v", got, want)
	}
}

// TestBulkPhaseRaisedAConfiguredLimit: a GOMEMLIMIT below what a phase
// would hold is kept.
func TestBulkPhaseRaisedAConfiguredLimit(t *testing.T) {
	t.Parallel()
	mem := int64(100 << 20)
	l, set := fake(64<<20, &mem)
	l.begin()()
	if got, want := *set, []int64{64 << 20, 64 << 20}; !slices.Equal(got, want) {
		t.Fatalf("limits set %v, want %v", got, want)
	}
}

// TestBulkPhaseBeforeEnableSetALimit: a library user who gave the server
// no Limiter keeps its own GC settings.
func TestBulkPhaseBeforeEnableSetALimit(t *testing.T) {
	t.Parallel()
	var none *Limiter
	ph := none.Phase()
	ph.Add(MinItems * 2)
	ph.Add(1)
	ph.End()
	none.begin()()
}

// TestInUseCountsTheLiveHeap reads the real runtime: what a phase holds is
// above the live heap and below all the memory the runtime has.
func TestInUseCountsTheLiveHeap(t *testing.T) {
	runtime.GC()
	n := New().inUse()
	if n <= 0 {
		t.Fatalf("inUse = %d", n)
	}
	s := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	live, total := int64(s[0].Value.Uint64()), int64(s[1].Value.Uint64()-s[2].Value.Uint64())
	if n < live || n > total {
		t.Fatalf("inUse = %d, want within [live heap %d, memory in use %d]", n, live, total)
	}
}

// TestSmallRefreshCollectedEarly: a refresh of a few hundred tools (a
// backend's list_changed while thousands of sessions are served) held the
// limit and made the collector run in the middle of the fan-out; a Phase
// holds it only from MinItems on.
func TestSmallRefreshCollectedEarly(t *testing.T) {
	t.Parallel()
	mem := int64(10 << 20)
	l, set := fake(math.MaxInt64, &mem)
	small := l.Phase()
	small.Add(MinItems - 1)
	small.End()
	if len(*set) != 0 {
		t.Fatalf("a phase of %d items set limits %v", MinItems-1, *set)
	}
	large := l.Phase()
	large.Add(MinItems - 1)
	large.Add(1)
	large.Add(1)
	large.End()
	large.End()
	if got, want := *set, []int64{10<<20 + Headroom, 10<<20 + Headroom, math.MaxInt64}; !slices.Equal(got, want) {
		t.Fatalf("limits set %v, want %v", got, want)
	}
}
