package main

import (
	"context"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"time"
)

// GC tuning. vmcp's live heap is small (the catalogue and per-session
// state, a few MiB) while every proxied call allocates short-lived garbage
// (the go-sdk's JSON decoding alone allocates a 32 KiB buffer per message it
// parses). With the default GOGC=100 the heap target is twice the live
// heap, so the collector ran dozens of times a second under load and took
// about a third of vmcp's CPU. The tuner lets the heap grow by gcHeadroom
// over the live heap before collecting (but never by less than GOGC=100
// would), bounding the extra memory to the headroom while making
// collections rare. VMCP_GC_HEADROOM_MB sets the headroom (default 64);
// setting GOGC in the environment disables the tuner. GOMEMLIMIT still
// applies (the runtime collects earlier near the limit).
const (
	gcHeadroom     = 64 << 20 // default bytes of garbage allowed between collections
	gcTuneInterval = 500 * time.Millisecond
	gcMaxPercent   = 10000 // with a tiny live heap
)

// tuneGC adjusts the GC percentage to the live heap until ctx ends.
func tuneGC(ctx context.Context) {
	if _, set := os.LookupEnv("GOGC"); set {
		return
	}
	headroom := uint64(gcHeadroom)
	if v, err := strconv.ParseUint(os.Getenv("VMCP_GC_HEADROOM_MB"), 10, 32); err == nil {
		if v == 0 {
			return
		}
		headroom = v << 20
	}
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	current := 100
	apply := func() {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		if p := gcPercent(sample[0].Value.Uint64(), headroom); p != current && (p > current*11/10 || p < current*9/10) {
			debug.SetGCPercent(p)
			current = p
		}
	}
	apply()
	t := time.NewTicker(gcTuneInterval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			apply()
		}
	}
}

// gcPercent is the GOGC that puts the heap target headroom above live,
// within [100, gcMaxPercent].
func gcPercent(live, headroom uint64) int {
	if live < 1<<20 {
		live = 1 << 20
	}
	return int(min(max(headroom*100/live, 100), gcMaxPercent))
}
