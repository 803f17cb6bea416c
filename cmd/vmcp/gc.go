package main

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"os"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/KimMachineGun/automemlimit/memlimit"
	"github.com/vmcp/vmcp/pkg/bulkgc"
)

// GC tuning. vmcp's live heap is small (the catalogue and per-session
// state, a few MiB), and some paths allocate a lot of short-lived garbage:
// a Legacy request served by the go-sdk server and client (listing, calls
// to stdio backends) allocates a 32 KiB buffer per message parsed (~400 KB
// per proxied call; a relayed call allocates ~12-17 KB). With the default
// GOGC=100 the heap target is twice the live heap, so under load the
// collector ran 30+ times a second and took about a third of vmcp's CPU.
// Measured with make bench (2026-11-30): at 4 collections a second GC
// still took ~10% of the CPU per call on both revisions (Legacy relay 232
// -> 199 µs, Modern 359 -> 328 µs at 1 a second).
//
// So the tuner raises GOGC only as far as needed to bring collections
// down to about gcTargetRate per second at the current allocation rate,
// never by more than the headroom over the live heap and never below
// GOGC=100. Setting GOGC in the environment turns it off; GOMEMLIMIT
// still applies.
//
// The headroom bounds the peak: 64 MiB let a burst at start-up grow the
// heap to 34 MiB (peak RSS 56 MiB under c=32 Legacy calls); 16 MiB keeps
// it at 41-45, over the 40 MiB aimed at. 4 MiB gives 36-37 at no
// measurable CPU cost on the relayed paths, but costs the go-sdk's paths
// ~10% more CPU per call (516 -> 568 µs): no one headroom serves both.
//
// So the headroom used adapts: the smallest, from gcHeadroomFloor up to
// the most allowed (default 16 MiB, VMCP_GC_HEADROOM_MB; 0 turns the tuner
// off), that keeps the GC's own CPU (assists, dedicated marking, pauses;
// idle marking uses CPU nothing else wanted) at about gcCPUShare of the
// CPU spent on user work, both as measured by the runtime (/cpu/classes).
//
// A cycle costs about the same whatever the growth before it (the live
// heap is what is marked), so the growth that keeps the share is cost per
// cycle x allocation rate / (gcCPUShare x user CPU rate). Garbage that
// comes with a lot of work (relayed calls, ~12-15 KB each) is cheap to
// collect and gets little headroom, toward the floor; ~400 KB per call
// gets more, up to the most. Until a cycle has been measured (start-up),
// and with no user CPU (idle), the most applies.
//
// The runtime's estimate runs high (a dedicated mark worker counts for
// its whole time): under make bench's c=32 Legacy calls it put a cycle at
// 1-5 ms over 0.3-0.6 CPU-s/s of user work (2026-12-02). At a 3% share
// that kept ~7 MiB (peak RSS 47-49 MiB); at 10% the relay settles at the
// floor (36-37 MiB) at the CPU per call of a fixed 16 MiB (0.97-1.00x the
// plain proxy's; 16 MiB: 0.96-1.02x), and a go-sdk-served load keeps
// most of the 16 MiB (541 -> 542-572 µs per call, within the noise).
//
// A memory limit caps the most allowed at a quarter of it, before the
// rest: GOMEMLIMIT, or, when unset, 90% of the container's (cgroup)
// memory limit, which vmcp serve sets as GOMEMLIMIT at start
// (setMemoryLimit).
const (
	gcHeadroom      = 16 << 20 // default cap on garbage between collections
	gcHeadroomFloor = 4 << 20  // the least headroom used when the GC is cheap
	gcCPUShare      = 0.10     // GC CPU per user CPU the headroom aims at (runtime estimates)
	gcTargetRate    = 1        // collections per second worth paying for
	gcTuneInterval  = 500 * time.Millisecond
	gcMaxPercent    = 10000
	// Memory goes back to the OS (debug.FreeOSMemory, at most every
	// gcReturnEvery) when heap memory free but held exceeds gcReturnFree and
	// the live heap, or when the goroutine count fell by gcReturnGoroutines
	// and by half (thousands of sessions or streams ended: their memory is
	// garbage that an idle process would not collect for two minutes).
	gcReturnFree       = 64 << 20
	gcReturnGoroutines = 1000
	gcReturnEvery      = 20 * time.Second
	// When allocation goes quiet (gcQuietTicks ticks in a row at a rate that
	// would not reach the next collection within gcQuietFor), garbage and
	// free pages held over gcQuietHeld and a quarter of the live heap go
	// back too, at most every gcQuietEvery: the headroom a burst used (200
	// sessions opening) is not kept by an idle node until the forced
	// collection two minutes later.
	gcQuietTicks = 2
	gcQuietFor   = 10 * time.Second
	gcQuietHeld  = 4 << 20
	gcQuietEvery = 5 * time.Second
)

// startGCTuner starts tuneGC, unless GOGC is set or VMCP_GC_HEADROOM_MB
// is 0, and with it bulk phases: the Limiter returned (nil when the tuner
// is off) is the server's (vmcp.Options.BulkGC: catalogue loads collect at
// the tuner's floor headroom).
//
// VMCP_TUNING_OFF (make bench's tuning comparison only) switches either
// off alone: gctuner runs no tuner, gogc one that only hands memory back
// (GOGC stays 100), bulkgc returns no Limiter.
func startGCTuner(ctx context.Context, log *slog.Logger) *bulkgc.Limiter {
	if _, set := os.LookupEnv("GOGC"); set {
		return nil
	}
	headroom, on := headroomFromEnv(log)
	if !on {
		return nil
	}
	r, ok := readGC()
	if !ok {
		return nil
	}
	off := tuningOffFromEnv()
	if !off["gctuner"] {
		go tuneGC(ctx, newGCTuner(headroom, r, time.Now()), !off["gogc"])
	}
	if off["bulkgc"] {
		return nil
	}
	return bulkgc.New()
}

// tuneGC adjusts the GC percentage to the allocation rate and live heap
// (unless setPercent is false), and hands memory back to the OS, every
// gcTuneInterval until ctx ends.
func tuneGC(ctx context.Context, tu *gcTuner, setPercent bool) {
	t := time.NewTicker(gcTuneInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case now := <-t.C:
			r, _ := readGC()
			if p, set := tu.percent(now, r, debug.SetMemoryLimit(-1)); set && setPercent {
				debug.SetGCPercent(p)
			}
			if tu.release(now, r) {
				debug.FreeOSMemory() // a full collection, then free pages go back to the OS
			}
		}
	}
}

// headroomFromEnv is the tuner's headroom in bytes: VMCP_GC_HEADROOM_MB
// MiB (0: the tuner is off, on is false), else gcHeadroom; a value that is
// not a whole number of MiB below 2^32 is logged and ignored.
func headroomFromEnv(log *slog.Logger) (headroom uint64, on bool) {
	s, set := os.LookupEnv("VMCP_GC_HEADROOM_MB")
	if !set {
		return gcHeadroom, true
	}
	v, err := strconv.ParseUint(s, 10, 32)
	if err != nil {
		log.Warn("VMCP_GC_HEADROOM_MB ignored: want a whole number of MiB (0 turns the GC tuner off)", "value", s, "default_MiB", gcHeadroom>>20)
		return gcHeadroom, true
	}
	return v << 20, v != 0
}

// setMemoryLimit sets GOMEMLIMIT to 90% of the memory limit the provider
// reports (memlimit.FromCgroup: the container's) unless GOMEMLIMIT is set
// in the environment; no limit leaves it unlimited. It returns the limit
// in force (math.MaxInt64: none).
func setMemoryLimit(log *slog.Logger, provider memlimit.Provider) int64 {
	limit, err := memlimit.Set(memlimit.WithProvider(provider))
	badRatio := err != nil && (strings.Contains(err.Error(), "AUTOMEMLIMIT") || strings.Contains(err.Error(), "invalid ratio"))
	switch {
	case err == nil || errors.Is(err, memlimit.ErrNoLimit):
	case badRatio:
		log.Warn("AUTOMEMLIMIT ignored: want off or a ratio in (0, 1]; GOMEMLIMIT not set", "value", os.Getenv("AUTOMEMLIMIT"), "error", err)
	default:
		log.Debug("no container memory limit read; GOMEMLIMIT not set", "error", err)
	}
	if limit > 0 && limit < math.MaxInt64 {
		source := "90% of the container's memory limit"
		if os.Getenv("GOMEMLIMIT") != "" {
			source = "GOMEMLIMIT"
		}
		log.Info("memory limit in force", "GOMEMLIMIT_MiB", limit>>20, "from", source)
	}
	return limit
}

// limitedHeadroom is headroom capped at a quarter of the memory limit
// (bytes; <= 0 or math.MaxInt64: no limit), so garbage between collections
// never crowds the live heap against the limit.
func limitedHeadroom(headroom uint64, limit int64) uint64 {
	if limit <= 0 || limit == math.MaxInt64 {
		return headroom
	}
	return min(headroom, uint64(limit)/4)
}

// gcPercent is the GOGC at which a live heap collected at an allocation
// rate of rate bytes/s sees about gcTargetRate collections per second,
// within [100, headroom over live] (live counts at least 1 MiB).
func gcPercent(live, rate, headroom uint64) int {
	live = max(live, 1<<20)
	growth := min(rate/gcTargetRate, headroom) // bytes allocated between collections
	return int(min(max(growth*100/live, 100), gcMaxPercent))
}
