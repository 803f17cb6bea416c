package main

import (
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"time"
)

var auditOn = flag.Bool("audit", true, "legacy, modern and sdk rows: also measure a second vmcp with the audit log on (a file in the temp dir) and print its throughput, latency and CPU per call as ratios to the same vmcp without (issue 30; -audit=false skips it)")

// withAudit returns targets with, unless -audit=false, a vmcp fronting beURL
// with the audit log on (measured in the same interleaved rounds as the
// plain one), and the func that stops it.
func withAudit(tmp, beURL string, targets []*target) ([]*target, func(), error) {
	if !*auditOn {
		return targets, func() {}, nil
	}
	path := filepath.Join(tmp, "audit-"+strconv.FormatInt(time.Now().UnixNano(), 36)+".jsonl")
	vm, url, err := startVMCP(tmp, beURL, fmt.Sprintf("audit:\n  path: %s\n", path))
	if err != nil {
		return nil, nil, fmt.Errorf("vmcp with the audit log: %w", err)
	}
	return append(targets, &target{name: "vmcp+audit", url: url, vmcp: vm, hop: vm}), vm.stop, nil
}

// printAudit prints the audit log's cost: the medians of each round's
// ratio of vmcp with the audit log to vmcp without (nothing with -audit=false).
func printAudit(name string, res map[string][]result) {
	on, off := res["vmcp+audit"], res["vmcp"]
	if len(on) == 0 || len(on) != len(off) {
		return
	}
	ratio := func(f func(result) float64) float64 {
		rs := make([]float64, len(on))
		for i := range on {
			rs[i] = f(on[i]) / f(off[i])
		}
		return medianBy(rs, func(x float64) float64 { return x })
	}
	fmt.Printf("%s, audit log on ÷ off: c=%d throughput %.2f×, c=1 p50 %.2f×, vmcp CPU µs/call %.0f → %.0f (%.2f×), KB alloc/call %.1f → %.1f\n",
		name, *conc, ratio(func(r result) float64 { return r.rpsN }), ratio(func(r result) float64 { return float64(r.p50) }),
		median(off).cpuUS, median(on).cpuUS, ratio(func(r result) float64 { return r.cpuUS }),
		median(off).bytes/1024, median(on).bytes/1024)
}
