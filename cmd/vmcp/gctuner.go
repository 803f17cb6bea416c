package main

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// gcReading is one reading of the runtime's heap, in bytes (allocs is the
// cumulative count allocated), and of its goroutine count.
type gcReading struct {
	live, allocs, free, objects, goal uint64
	goroutines                        int
}

var gcSamples = []string{"/gc/heap/live:bytes", "/gc/heap/allocs:bytes", "/memory/classes/heap/free:bytes",
	"/memory/classes/heap/objects:bytes", "/gc/heap/goal:bytes"}

// readGC reads the runtime's metrics; ok is false when this runtime does
// not offer them all.
func readGC() (r gcReading, ok bool) {
	s := make([]metrics.Sample, len(gcSamples))
	for i, n := range gcSamples {
		s[i].Name = n
	}
	metrics.Read(s)
	v := make([]uint64, len(s))
	for i := range s {
		if s[i].Value.Kind() != metrics.KindUint64 {
			return r, false
		}
		v[i] = s[i].Value.Uint64()
	}
	return gcReading{live: v[0], allocs: v[1], free: v[2], objects: v[3], goal: v[4], goroutines: runtime.NumGoroutine()}, true
}

// gcTuner is tuneGC's state between ticks: the GOGC it set, the smoothed
// allocation rate, and when it last handed memory back.
type gcTuner struct {
	headroom   uint64
	current    int // GOGC in force
	lastAllocs uint64
	last       time.Time
	r, rate    float64   // bytes/s over the last tick; smoothed
	returned   time.Time // last release
	peakG      int       // goroutines at most since then
	quiet      int       // quiet ticks in a row
}

func newGCTuner(headroom uint64, r gcReading, now time.Time) *gcTuner {
	return &gcTuner{headroom: headroom, current: 100, lastAllocs: r.allocs, last: now, peakG: r.goroutines}
}

// percent takes a reading and returns the GOGC to set (set is false when
// it is within 10% of the one in force), with the headroom capped by the
// memory limit (bytes; math.MaxInt64: none).
func (t *gcTuner) percent(now time.Time, r gcReading, limit int64) (p int, set bool) {
	if s := now.Sub(t.last).Seconds(); s > 0 {
		t.r = float64(r.allocs-t.lastAllocs) / s
	}
	t.lastAllocs, t.last = r.allocs, now
	t.rate = 0.5*t.rate + 0.5*t.r
	p = gcPercent(r.live, uint64(t.rate), limitedHeadroom(t.headroom, limit))
	if p == t.current || (p <= t.current*11/10 && p >= t.current*9/10 && p != 100) {
		return t.current, false
	}
	t.current = p
	return p, true
}

// release reports whether memory should go back to the OS now (after
// percent took the same reading): a burst's memory left behind (free pages
// over gcReturnFree, or thousands of goroutines gone) or, once allocation
// has gone quiet, garbage and free pages worth returning (gcQuietHeld).
func (t *gcTuner) release(now time.Time, r gcReading) bool {
	t.peakG = max(t.peakG, r.goroutines)
	since := now.Sub(t.returned)
	burst := r.free > gcReturnFree && r.free > r.live || t.peakG-r.goroutines >= gcReturnGoroutines && r.goroutines < t.peakG/2
	if t.r*gcQuietFor.Seconds() < float64(r.goal)-float64(r.objects) {
		t.quiet++
	} else {
		t.quiet = 0
	}
	held := r.objects - min(r.live, r.objects) + r.free
	idle := t.quiet >= gcQuietTicks && held > max(gcQuietHeld, r.live/4) && since >= gcQuietEvery
	if !(burst && since >= gcReturnEvery) && !idle {
		return false
	}
	t.returned, t.peakG, t.quiet = now, r.goroutines, 0
	return true
}
