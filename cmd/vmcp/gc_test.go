package main

import "testing"

func TestGCPercent(t *testing.T) {
	const MiB = 1 << 20
	for _, c := range []struct {
		live, rate uint64
		want       int
	}{
		{8 * MiB, 0, 100},             // idle: the default
		{8 * MiB, 4 * MiB, 100},       // little garbage: under a collection/s at the default
		{8 * MiB, 20 * MiB, 250},      // 20 MiB between collections
		{8 * MiB, 400 * MiB, 800},     // capped at 64 MiB over the live heap
		{0, 400 * MiB, 6400},          // a tiny live heap counts as 1 MiB
		{128 * MiB, 400 * MiB, 100},   // big live heaps keep the default
		{1 * MiB, 100000 * MiB, 6400}, // the cap is the headroom
		{512 * 1024, 10 * MiB, 1000},  // 10 MiB between collections over 1 MiB
		{16 * MiB, 64 * MiB, 400},     // exactly the headroom
		{16 * MiB, 8 * MiB, 100},      // half the live heap: never below 100
		{64 * MiB, 128 * MiB, 100},    // headroom equals live: 100
		{32 * MiB, 1024 * MiB, 200},   // capped: 64 MiB over 32 MiB live
	} {
		if got := gcPercent(c.live, c.rate, gcHeadroom); got != c.want {
			t.Errorf("gcPercent(live %d, rate %d) = %d, want %d", c.live, c.rate, got, c.want)
		}
	}
	if got := gcPercent(MiB, 1<<40, 256*MiB); got != gcMaxPercent {
		t.Errorf("gcPercent with a 256 MiB headroom over 1 MiB = %d, want the cap %d", got, gcMaxPercent)
	}
}
