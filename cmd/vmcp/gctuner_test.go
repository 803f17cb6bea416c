package main

import (
	"math"
	"runtime"
	"runtime/debug"
	"testing"
	"time"
)

const testMiB = 1 << 20

// tickAt feeds tu one reading per gcTuneInterval, allocating perTick bytes
// between readings, and returns whether the last one released memory.
func tickAt(tu *gcTuner, now *time.Time, r *gcReading, perTick uint64, n int) (released bool) {
	for range n {
		*now = now.Add(gcTuneInterval)
		r.allocs += perTick
		tu.percent(*now, *r, math.MaxInt64)
		released = tu.release(*now, *r)
	}
	return released
}

// TestIdleNodeKeptTheGarbageOfABurst: after a burst (200 sessions opening)
// allocation stops with 12 MiB of garbage over a 4 MiB live heap; the tuner
// hands it back after gcQuietTicks quiet ticks, and not again at once.
func TestIdleNodeKeptTheGarbageOfABurst(t *testing.T) {
	now := time.Unix(1000, 0)
	r := gcReading{live: 4 * testMiB, objects: 16 * testMiB, goal: 20 * testMiB, goroutines: 400}
	tu := newGCTuner(gcHeadroom, r, now)
	if tickAt(tu, &now, &r, 8*testMiB, 4) { // 16 MiB/s: the next collection is < 1 s away
		t.Fatal("released memory while allocating 16 MiB/s")
	}
	if tickAt(tu, &now, &r, 0, gcQuietTicks-1) {
		t.Fatal("released after one quiet tick; want gcQuietTicks")
	}
	if !tickAt(tu, &now, &r, 0, 1) {
		t.Fatalf("12 MiB of garbage held after %d quiet ticks: want it handed back", gcQuietTicks)
	}
	if tickAt(tu, &now, &r, 0, int(gcQuietEvery/gcTuneInterval)-1) {
		t.Fatalf("released again within gcQuietEvery (%v)", gcQuietEvery)
	}
}

// TestQuietReleaseNeedsGarbageWorthIt: a quiet node holding little over
// its live heap (under gcQuietHeld, or a quarter of a big live heap) keeps
// it; slow allocation that would not reach the next collection for
// gcQuietFor still counts as quiet.
func TestQuietReleaseNeedsGarbageWorthIt(t *testing.T) {
	for _, c := range []struct {
		name          string
		live, objects uint64
		free, perTick uint64
		want          bool
	}{
		{"little garbage", 4 * testMiB, 6 * testMiB, testMiB, 0, false},
		{"a quarter of a big live heap", 200 * testMiB, 240 * testMiB, 0, 0, false},
		{"over a quarter of a big live heap", 200 * testMiB, 240 * testMiB, 20 * testMiB, 0, true},
		{"free pages count", 4 * testMiB, 4 * testMiB, 8 * testMiB, 0, true},
		{"slow allocation is quiet", 4 * testMiB, 16 * testMiB, 0, 64 << 10, true},
		{"steady allocation is not", 4 * testMiB, 16 * testMiB, 0, testMiB, false},
	} {
		now := time.Unix(1000, 0)
		r := gcReading{live: c.live, objects: c.objects, free: c.free, goal: 2*c.live + 16*testMiB, goroutines: 10}
		tu := newGCTuner(gcHeadroom, r, now)
		if got := tickAt(tu, &now, &r, c.perTick, gcQuietTicks); got != c.want {
			t.Errorf("%s: released = %v, want %v", c.name, got, c.want)
		}
	}
}

// TestSessionsEndingReleaseTheirMemory: thousands of goroutines gone (the
// sessions that held them ended) releases even while allocation goes on,
// at most every gcReturnEvery.
func TestSessionsEndingReleaseTheirMemory(t *testing.T) {
	now := time.Unix(1000, 0)
	r := gcReading{live: 40 * testMiB, objects: 60 * testMiB, goal: 80 * testMiB, goroutines: 10500}
	tu := newGCTuner(gcHeadroom, r, now)
	r.goroutines = 300
	if !tickAt(tu, &now, &r, 32*testMiB, 1) {
		t.Fatal("10,200 goroutines ended: want a release")
	}
	tu.peakG = 10500
	if tickAt(tu, &now, &r, 32*testMiB, 1) {
		t.Fatalf("released twice within gcReturnEvery (%v)", gcReturnEvery)
	}
}

// TestQuietReleaseOnTheRealRuntime: 32 MiB of garbage left by a burst (at
// the high GOGC the tuner sets under load) is read as held, the tuner asks
// for a release, and debug.FreeOSMemory hands it back.
func TestQuietReleaseOnTheRealRuntime(t *testing.T) {
	defer debug.SetGCPercent(debug.SetGCPercent(100000))
	runtime.GC()
	for range 32 {
		burstSink = make([]byte, testMiB) // each overwrites the last: 31 MiB garbage
	}
	burstSink = nil
	r, ok := readGC()
	if !ok {
		t.Skip("runtime/metrics lacks a heap metric")
	}
	if held := r.objects - r.live; held < 28*testMiB {
		t.Fatalf("read %d MiB of garbage, want the burst's 32", held/testMiB)
	}
	now := time.Now()
	tu := newGCTuner(gcHeadroom, r, now)
	if !tickAt(tu, &now, &r, 0, gcQuietTicks) {
		t.Fatal("the burst's garbage was not released once quiet")
	}
	debug.FreeOSMemory()
	after, _ := readGC()
	if after.objects-min(after.live, after.objects)+after.free > 8*testMiB {
		t.Fatalf("after the release %d MiB still held", (after.objects-after.live+after.free)/testMiB)
	}
}

// burstSink keeps the compiler from eliding the burst's allocations.
var burstSink []byte
