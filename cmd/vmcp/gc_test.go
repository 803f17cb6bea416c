package main

import "testing"

func TestGCPercent(t *testing.T) {
	for _, c := range []struct {
		live uint64
		want int
	}{
		{0, 6400},         // before the first GC: treated as 1 MiB live
		{512 << 10, 6400}, // tiny heaps count as 1 MiB
		{4 << 20, 1600},   // the heap may grow by 64 MiB over 4 MiB live
		{32 << 20, 200},
		{64 << 20, 100}, // never below the default
		{1 << 30, 100},
	} {
		if got := gcPercent(c.live, gcHeadroom); got != c.want {
			t.Errorf("gcPercent(%d) = %d, want %d", c.live, got, c.want)
		}
	}
	if got := gcPercent(1<<20, 256<<20); got != gcMaxPercent {
		t.Errorf("gcPercent(1 MiB, 256 MiB) = %d, want the cap %d", got, gcMaxPercent)
	}
}
