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

// gcLoad is a steady load as the runtime reports it: bytes allocated and
// user CPU-seconds spent per second, and cycles ending per tick, each
// costing the GC perCycle CPU-seconds.
type gcLoad struct {
	allocRate, userRate, perCycle float64
	cyclesPerTick                 uint64
}

var (
	// relayLoad: relayed Legacy calls, ~12 KB and ~115 µs of CPU each, as
	// the runtime measured them under make bench's c=32 (2026-12-02).
	relayLoad = gcLoad{allocRate: 26 * testMiB, userRate: 0.5, perCycle: 4e-3, cyclesPerTick: 3}
	// sdkLoad: calls the go-sdk serves end to end, ~400 KB and ~500 µs of
	// CPU each (~1,300 a second).
	// The runtime's estimate of a cycle's cost on vmcp under load was 1-5 ms
	// (make bench, 2026-12-02).
	sdkLoad = gcLoad{allocRate: 500 * testMiB, userRate: 0.65, perCycle: 3e-3, cyclesPerTick: 15}
)

// run feeds tu n ticks of the load under the memory limit limit and
// returns the GOGC in force after them.
func (l gcLoad) run(tu *gcTuner, now *time.Time, r *gcReading, limit int64, n int) int {
	s := gcTuneInterval.Seconds()
	for range n {
		*now = now.Add(gcTuneInterval)
		r.allocs += uint64(l.allocRate * s)
		r.userCPU += l.userRate * s
		r.cycles += l.cyclesPerTick
		r.gcCPU += l.perCycle * float64(l.cyclesPerTick)
		tu.percent(*now, *r, limit)
	}
	return tu.current
}

// A 2 MiB live heap: GOGC 200 is the 4 MiB floor over it, 800 the 16 MiB
// default headroom.
const (
	testLive        = 2 * testMiB
	testFloorGOGC   = 200
	testDefaultGOGC = 800
)

// settled reports whether GOGC got is want, give or take the 10% within
// which percent leaves the GOGC in force alone.
func settled(got, want int) bool {
	return got >= want*9/10 && got <= want*11/10
}

// TestHeadroomShrinksWhereGarbageIsCheap: relayed calls allocate little per
// unit of work, so collecting at the floor (4 MiB over the live heap) keeps
// the GC well under gcCPUShare; the 16 MiB headroom would only cost memory.
func TestHeadroomShrinksWhereGarbageIsCheap(t *testing.T) {
	now := time.Unix(1000, 0)
	r := gcReading{live: testLive}
	tu := newGCTuner(gcHeadroom, r, now)
	if got := relayLoad.run(tu, &now, &r, math.MaxInt64, 10); !settled(got, testFloorGOGC) {
		t.Fatalf("relay load: GOGC %d, want %d (the 4 MiB floor over 2 MiB live)", got, testFloorGOGC)
	}
}

// TestGarbageHeavyLoadGetsTheFullHeadroomBack: after a relay load shrank
// the headroom to the floor, calls the go-sdk serves (~400 KB each) would
// spend far over gcCPUShare collecting at it; the tuner goes back to 16 MiB.
func TestGarbageHeavyLoadGetsTheFullHeadroomBack(t *testing.T) {
	now := time.Unix(1000, 0)
	r := gcReading{live: testLive}
	tu := newGCTuner(gcHeadroom, r, now)
	if got := relayLoad.run(tu, &now, &r, math.MaxInt64, 10); !settled(got, testFloorGOGC) {
		t.Fatalf("precondition: relay load GOGC %d, want the floor's %d", got, testFloorGOGC)
	}
	if got := sdkLoad.run(tu, &now, &r, math.MaxInt64, 10); !settled(got, testDefaultGOGC) {
		t.Fatalf("go-sdk load: GOGC %d, want %d (the full 16 MiB over 2 MiB live)", got, testDefaultGOGC)
	}
}

// TestFullHeadroomUntilAGCCycleIsMeasured: before any cycle has ended the
// GC's cost is unknown (not zero), so the full headroom applies, as it does
// with no user CPU to weigh it against; the first cycles measured shrink it.
func TestFullHeadroomUntilAGCCycleIsMeasured(t *testing.T) {
	now := time.Unix(1000, 0)
	r := gcReading{live: testLive}
	tu := newGCTuner(gcHeadroom, r, now)
	noCycles := relayLoad
	noCycles.cyclesPerTick = 0
	if got := noCycles.run(tu, &now, &r, math.MaxInt64, 10); !settled(got, testDefaultGOGC) {
		t.Fatalf("before any cycle: GOGC %d, want the full headroom's %d", got, testDefaultGOGC)
	}
	if got := relayLoad.run(tu, &now, &r, math.MaxInt64, 1); !settled(got, testFloorGOGC) {
		t.Fatalf("once cycles are measured: GOGC %d, want the floor's %d", got, testFloorGOGC)
	}
	idle := relayLoad
	idle.userRate = 0
	tu = newGCTuner(gcHeadroom, r, now)
	if got := idle.run(tu, &now, &r, math.MaxInt64, 10); !settled(got, testDefaultGOGC) {
		t.Fatalf("no user CPU: GOGC %d, want the full headroom's %d", got, testDefaultGOGC)
	}
}

// TestMemoryLimitCapsTheAdaptiveHeadroom: a quarter of the memory limit
// caps the headroom before the GC's cost chooses within it, floor included
// (a 12 MiB limit leaves 3 MiB, under the 4 MiB floor); a cheap GC still
// takes the floor under a cap above it.
func TestMemoryLimitCapsTheAdaptiveHeadroom(t *testing.T) {
	for _, c := range []struct {
		name  string
		load  gcLoad
		limit int64
		want  int
	}{
		{"go-sdk load, 32 MiB limit", sdkLoad, 32 * testMiB, 400},  // 8 MiB over 2
		{"relay load, 12 MiB limit", relayLoad, 12 * testMiB, 150}, // 3 MiB over 2
		{"relay load, 40 MiB limit", relayLoad, 40 * testMiB, 200}, // the floor, under 10 MiB
	} {
		now := time.Unix(1000, 0)
		r := gcReading{live: testLive}
		tu := newGCTuner(gcHeadroom, r, now)
		if got := c.load.run(tu, &now, &r, c.limit, 10); !settled(got, c.want) {
			t.Errorf("%s: GOGC %d, want %d", c.name, got, c.want)
		}
	}
}

// TestHeadroomIsTheGrowthThatKeepsGCAtItsCPUShare pins the arithmetic: 2 ms
// per cycle at 500 MiB/s against 1.5 CPU-s/s of user work keeps 10% at
// 6.7 MiB. The runtime updates its CPU metrics only as a cycle ends, so a
// tick in which none ended keeps that (it is not a tick of no user CPU).
func TestHeadroomIsTheGrowthThatKeepsGCAtItsCPUShare(t *testing.T) {
	now := time.Unix(1000, 0)
	c := gcCost{at: now}
	now = now.Add(time.Second)
	r := gcReading{cycles: 10, gcCPU: 20e-3, userCPU: 1.5}
	c.update(now, r)
	const rate = 500 * testMiB
	want := 2e-3 * rate / (gcCPUShare * 1.5) // 6.7 MiB
	if got := c.headroom(rate, gcHeadroom); math.Abs(float64(got)-want) > 1024 {
		t.Fatalf("headroom %.2f MiB, want %.2f", float64(got)/testMiB, want/testMiB)
	}
	c.update(now.Add(gcTuneInterval), r) // no cycle ended: the same reading
	if got := c.headroom(rate, gcHeadroom); math.Abs(float64(got)-want) > 1024 {
		t.Fatalf("after a tick without a cycle: headroom %.2f MiB, want %.2f kept", float64(got)/testMiB, want/testMiB)
	}
}

// TestReadGCReadsTheGCsCost: on this runtime readGC finds every metric,
// and a forced collection shows as a cycle that cost CPU.
func TestReadGCReadsTheGCsCost(t *testing.T) {
	before, ok := readGC()
	if !ok {
		t.Fatal("readGC: a metric is missing or of another kind")
	}
	runtime.GC()
	after, _ := readGC()
	if after.cycles <= before.cycles || after.gcCPU <= before.gcCPU || after.userCPU < before.userCPU {
		t.Fatalf("across runtime.GC(): cycles %d -> %d, GC CPU %g -> %g s, user %g -> %g s",
			before.cycles, after.cycles, before.gcCPU, after.gcCPU, before.userCPU, after.userCPU)
	}
}
