package main

import (
	"runtime"
	"runtime/metrics"
	"time"
)

// gcReading is one reading of the runtime's heap, in bytes (allocs is the
// cumulative count allocated), of its goroutine count, and of the CPU
// spent since start: gcCPU by the GC (mark assists, dedicated marking,
// pauses; not idle marking) and userCPU on user work, in CPU-seconds, both
// as of the end of the last of the cycles collections.
type gcReading struct {
	live, allocs, free, objects, goal uint64
	cycles                            uint64
	gcCPU, userCPU                    float64
	goroutines                        int
}

// gcSamples are the metrics readGC reads: the first gcUintSamples are
// KindUint64, the rest KindFloat64.
var gcSamples = []string{"/gc/heap/live:bytes", "/gc/heap/allocs:bytes", "/memory/classes/heap/free:bytes",
	"/memory/classes/heap/objects:bytes", "/gc/heap/goal:bytes", "/gc/cycles/total:gc-cycles",
	"/cpu/classes/gc/mark/assist:cpu-seconds", "/cpu/classes/gc/mark/dedicated:cpu-seconds",
	"/cpu/classes/gc/pause:cpu-seconds", "/cpu/classes/user:cpu-seconds"}

const gcUintSamples = 6

// readGC reads the runtime's metrics; ok is false when this runtime does
// not offer them all, each of the kind expected.
func readGC() (r gcReading, ok bool) {
	s := make([]metrics.Sample, len(gcSamples))
	for i, n := range gcSamples {
		s[i].Name = n
	}
	metrics.Read(s)
	u, f := make([]uint64, gcUintSamples), make([]float64, len(s)-gcUintSamples)
	for i := range s {
		switch k := s[i].Value.Kind(); {
		case i < gcUintSamples && k == metrics.KindUint64:
			u[i] = s[i].Value.Uint64()
		case i >= gcUintSamples && k == metrics.KindFloat64:
			f[i-gcUintSamples] = s[i].Value.Float64()
		default:
			return r, false
		}
	}
	return gcReading{live: u[0], allocs: u[1], free: u[2], objects: u[3], goal: u[4], cycles: u[5],
		gcCPU: f[0] + f[1] + f[2], userCPU: f[3], goroutines: runtime.NumGoroutine()}, true
}

// gcTuner is tuneGC's state between ticks: the GOGC it set, the smoothed
// allocation rate, what the GC costs, and when it last handed memory back.
type gcTuner struct {
	headroom   uint64 // the most it may use
	current    int    // GOGC in force
	lastAllocs uint64
	last       time.Time
	r, rate    float64 // bytes/s over the last tick; smoothed
	cost       gcCost
	returned   time.Time // last release
	peakG      int       // goroutines at most since then
	quiet      int       // quiet ticks in a row
}

func newGCTuner(headroom uint64, r gcReading, now time.Time) *gcTuner {
	return &gcTuner{headroom: headroom, current: 100, lastAllocs: r.allocs, last: now, peakG: r.goroutines,
		cost: gcCost{cycles: r.cycles, gcCPU: r.gcCPU, userCPU: r.userCPU, at: now}}
}

// percent takes a reading and returns the GOGC to set (set is false when
// it is within 10% of the one in force), with the headroom capped by the
// memory limit (bytes; math.MaxInt64: none), then by what the GC costs.
func (t *gcTuner) percent(now time.Time, r gcReading, limit int64) (p int, set bool) {
	if s := now.Sub(t.last).Seconds(); s > 0 {
		t.r = float64(r.allocs-t.lastAllocs) / s
	}
	t.lastAllocs, t.last = r.allocs, now
	t.rate = 0.5*t.rate + 0.5*t.r
	t.cost.update(now, r)
	p = gcPercent(r.live, uint64(t.rate), t.cost.headroom(t.rate, limitedHeadroom(t.headroom, limit)))
	if p == t.current || (p <= t.current*11/10 && p >= t.current*9/10 && p != 100) {
		return t.current, false
	}
	t.current = p
	return p, true
}

// gcCost is what the GC costs: CPU-seconds per cycle (perCycle) and the
// user CPU rate (CPU-seconds/s), each smoothed like the allocation rate.
// The runtime updates its CPU metrics only as a cycle ends, so both are
// measured over the span since the last tick that saw a cycle end (at, and
// the readings then) and kept through ticks that saw none.
type gcCost struct {
	measured           bool // a cycle has ended since the tuner started
	perCycle, userRate float64
	cycles             uint64
	gcCPU, userCPU     float64
	at                 time.Time
}

// update takes a reading at now; it measures only if cycles ended since the
// last one that did.
func (c *gcCost) update(now time.Time, r gcReading) {
	s := now.Sub(c.at).Seconds()
	if r.cycles <= c.cycles || s <= 0 {
		return
	}
	perCycle := max(r.gcCPU-c.gcCPU, 0) / float64(r.cycles-c.cycles)
	user := max(r.userCPU-c.userCPU, 0) / s
	if c.measured {
		perCycle, user = 0.5*c.perCycle+0.5*perCycle, 0.5*c.userRate+0.5*user
	}
	*c = gcCost{measured: true, perCycle: perCycle, userRate: user, cycles: r.cycles, gcCPU: r.gcCPU, userCPU: r.userCPU, at: now}
}

// headroom is the growth between collections, within [min(gcHeadroomFloor,
// headroom), headroom], at which the GC's CPU is about gcCPUShare of the
// user CPU at an allocation rate of rate bytes/s: cycles/s (rate/growth)
// times perCycle over userRate. Until a cycle is measured, or with no user
// CPU (an idle node), it is headroom.
func (c *gcCost) headroom(rate float64, headroom uint64) uint64 {
	if !c.measured || c.userRate <= 0 {
		return headroom
	}
	growth := c.perCycle * rate / (gcCPUShare * c.userRate)
	return uint64(min(max(growth, float64(min(gcHeadroomFloor, headroom))), float64(headroom)))
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
