package main

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/vmcp/vmcp/pkg/metatools"
)

// printRebuild measures the index rebuild after one catalogue change in
// steady state (the "rebuild after a catalogue change" target):
// vmcp's configuration is rewritten with body (one backend fewer) and
// reloaded (SIGHUP); once /readyz counts fewer than had tools and a build
// has run, the builds since are read from the histogram's count and sum,
// which are exact (its buckets are not).
func printRebuild(vm *proc, base, body string, had int) error {
	before, err := scrapeHistograms(base, metatools.BuildSecondsMetric)
	if err != nil {
		return err
	}
	h0 := before[metatools.BuildSecondsMetric]
	if err := os.WriteFile(vm.config, []byte(vm.head+body), 0o644); err != nil {
		return err
	}
	if err := vm.cmd.Process.Signal(syscall.SIGHUP); err != nil {
		return err
	}
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		n, err := readyTools(base)
		if err != nil || n >= had {
			continue
		}
		after, err := scrapeHistograms(base, metatools.BuildSecondsMetric)
		if err != nil {
			return err
		}
		h := after[metatools.BuildSecondsMetric]
		if builds := h.count() - h0.count(); builds > 0 {
			mean := time.Duration((h.sum - h0.sum) / builds * float64(time.Second))
			verdict := "PASS"
			if mean > rebuildTarget {
				verdict = "MISS"
			}
			fmt.Printf("  %6d tools: after a reload removing one backend (%d → %d tools): %d index build(s), mean %s: %s (≤ %s, nothing else running)\n",
				had, had, n, int(builds), fmtDur(mean), verdict, fmtDur(rebuildTarget))
			return nil
		}
	}
	return errors.New("no index build within 30s of a reload")
}

// rebuildTarget is issue 31's bound on an index rebuild after a catalogue
// change, at 10,000 tools.
const rebuildTarget = 100 * time.Millisecond

// readyTools is the number of tools vmcp's /readyz counts.
func readyTools(base string) (int, error) {
	r, err := readyz(base)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, b := range r.Backends {
		n += b.Tools
	}
	return n, nil
}
