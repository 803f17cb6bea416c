// Package bulkgc keeps the heap near its live size while vmcp loads a
// catalogue: listing and registering thousands of tools through the go-sdk
// allocates ~50 KB of garbage per tool (its JSON decoder's 32 KiB buffer
// per schema), so fast that between collections the heap grew to three
// times its live size (a start-up peak of 80 MB RSS for 10,000 tools
// against 53 MB serving them).
//
// While a large bulk phase runs (Phase), the Go memory limit is held at the
// memory in use outside the heap, plus the live heap at the last
// collection, plus Headroom, refreshed at each Phase.Add (a page listed, a
// tool registered), so the collector runs as soon as the garbage reaches
// Headroom. The configured limit (GOMEMLIMIT, or the container's) is never
// raised and is restored when the last phase ends. It costs start-up CPU
// (10,000 tools: 2 s → 4-6 s, peak RSS 78 → 56-59 MB; make bench, walk
// row), so it is off unless the server is given a Limiter (vmcp serve:
// with its GC tuner; the memory limit is the process's, so one a process).
package bulkgc

import (
	"math"
	"runtime/debug"
	"runtime/metrics"
	"sync"
)

// Headroom is the garbage, in bytes, a bulk phase lets accumulate over the
// live heap before the collector runs.
const Headroom = 4 << 20 // the GC tuner's floor

// Limiter holds the memory limit while its bulk phases run: one per server
// (Options of vmcp.New). A nil *Limiter runs no phase: a library user keeps
// its own GC settings.
type Limiter struct {
	mu         sync.Mutex
	active     int   // bulk phases running
	configured int64 // the memory limit in force before the first began
	setLimit   func(int64) int64
	readMemory func() int64
	samples    []metrics.Sample // inUse's reads
}

// New returns a Limiter of the runtime's memory limit
// (debug.SetMemoryLimit).
func New() *Limiter {
	l := &Limiter{setLimit: debug.SetMemoryLimit, samples: []metrics.Sample{
		{Name: "/memory/classes/total:bytes"},
		{Name: "/memory/classes/heap/released:bytes"},
		{Name: "/memory/classes/heap/objects:bytes"},
		{Name: "/gc/heap/live:bytes"},
	}}
	l.readMemory = l.inUse
	return l
}

// Phase returns a bulk phase of l, begun only once it is large (a nil l:
// a phase that does nothing).
func (l *Limiter) Phase() Phase { return Phase{l: l} }

// begin starts a bulk phase; end (once; later calls do nothing) ends it,
// restoring the configured memory limit when no other phase runs. Phases
// may overlap (two backends listed at once).
func (l *Limiter) begin() (end func()) {
	if l == nil {
		return func() {}
	}
	l.mu.Lock()
	if l.active == 0 {
		l.configured = l.setLimit(-1)
	}
	l.active++
	l.mu.Unlock()
	l.hold()
	var once sync.Once
	return func() { once.Do(l.leave) }
}

func (l *Limiter) leave() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active--; l.active == 0 {
		l.setLimit(l.configured)
	}
}

// hold sets the limit to the memory in use but the heap's garbage, plus
// Headroom, capped at the configured limit; it does nothing outside a
// phase. Each Phase.Add refreshes it (the live heap grows as the catalogue
// does).
func (l *Limiter) hold() {
	if l == nil {
		return
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.active == 0 {
		return
	}
	l.setLimit(min(l.configured, l.readMemory()+Headroom))
}

// inUse is the memory the Go runtime counts against its limit, less the
// heap objects that are not live as of the last collection (bytes).
func (l *Limiter) inUse() int64 {
	metrics.Read(l.samples) // under mu
	var v [4]uint64
	for i, s := range l.samples {
		if s.Value.Kind() == metrics.KindUint64 {
			v[i] = s.Value.Uint64()
		}
	}
	used := v[0] - v[1]
	if garbage := v[2] - min(v[3], v[2]); garbage < used {
		used -= garbage
	}
	return int64(min(used, math.MaxInt64))
}

// MinItems is the size from which a Phase holds the limit: a refresh of a
// few hundred tools makes little garbage, and collecting early while
// thousands of sessions are served only delays them.
const MinItems = 500

// Phase is one bulk phase of a Limiter (Limiter.Phase), begun only once it
// is large; the zero value does nothing. End it when done (also when it
// never began). Not for concurrent use.
type Phase struct {
	l   *Limiter
	n   int
	end func()
}

// Add counts n items the phase has produced (tools listed or registered);
// from MinItems on, the phase holds the limit, refreshed at each Add.
func (p *Phase) Add(n int) {
	if p.n += n; p.n < MinItems || p.l == nil {
		return
	}
	if p.end == nil {
		p.end = p.l.begin()
		return
	}
	p.l.hold()
}

// End ends the phase.
func (p *Phase) End() {
	if p.end != nil {
		p.end()
		p.end = nil
	}
}
