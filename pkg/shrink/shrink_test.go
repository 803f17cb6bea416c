package shrink

import (
	"fmt"
	"runtime"
	"testing"
)

// heapAfter fills a map with n session-like keys, deletes them all with
// del, and returns the live heap with the emptied map still referenced.
func heapAfter(n int, del func(m *map[string]*int, p *Peak, k string)) uint64 {
	m, p := map[string]*int{}, Peak(0)
	for i := range n {
		m[fmt.Sprintf("session-%032d", i)] = new(int)
	}
	for i := range n {
		del(&m, &p, fmt.Sprintf("session-%032d", i))
	}
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	runtime.KeepAlive(m)
	return ms.HeapAlloc
}

// TestEndedSessionsKeptTheirMapsAtPeakSize: a map that held 100,000
// session keys held its buckets (megabytes) after every key was deleted;
// Delete hands them back.
func TestEndedSessionsKeptTheirMapsAtPeakSize(t *testing.T) {
	const n = 100_000
	plain := heapAfter(n, func(m *map[string]*int, _ *Peak, k string) { delete(*m, k) })
	shrunk := heapAfter(n, Delete[map[string]*int])
	if plain < shrunk+2<<20 {
		t.Fatalf("live heap after deleting %d keys: %d KiB with delete, %d KiB with Delete; want Delete to hand back the map's megabytes", n, plain>>10, shrunk>>10)
	}
}

func TestDeleteKeepsTheKeysLeft(t *testing.T) {
	m, p := map[int]int{}, Peak(0)
	for i := range 4 * MinPeak {
		m[i] = i
	}
	for i := range 4*MinPeak - 10 {
		Delete(&m, &p, i)
	}
	if len(m) != 10 || p > MinPeak/2 {
		t.Fatalf("len %d, peak %d; want 10 keys and the peak reset", len(m), p)
	}
	for i := 4*MinPeak - 10; i < 4*MinPeak; i++ {
		if m[i] != i {
			t.Fatalf("key %d lost in the copy", i)
		}
	}
	small, sp := map[int]int{1: 1, 2: 2}, Peak(0)
	Delete(&small, &sp, 1)
	if len(small) != 1 || small[2] != 2 {
		t.Fatalf("small map: %v", small)
	}
}
