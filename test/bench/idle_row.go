package main

import (
	"fmt"
	"strconv"
	"strings"
	"syscall"
)

// Targets of the idle row (issue: memory and scale).
const (
	targetIdleKB         = 40.0  // RSS per idle Legacy session through vmcp
	targetIdleGoroutines = 2.0   // goroutines per idle Legacy session
	targetIdleTotalMiB   = 400.0 // vmcp RSS with 10,000 idle sessions
)

// runIdle runs the idle row: for each count, the backend alone, vmcp and
// the plain proxy each serve that many idle sessions in turn.
func runIdle(tmp string) error {
	fmt.Printf("\n== idle Legacy sessions (GET stream open, no call)\n")
	var counts []int
	for _, f := range strings.Split(*idleCounts, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n <= 0 {
			return fmt.Errorf("-idle %q: not a list of counts", *idleCounts)
		}
		counts = append(counts, n)
	}
	targets, stop, err := startIdleTargets(tmp)
	if err != nil {
		return err
	}
	defer stop()
	var lim syscall.Rlimit
	_ = syscall.Getrlimit(syscall.RLIMIT_NOFILE, &lim)
	res := map[string]map[int]idleResult{}
	for _, t := range targets {
		res[t.name] = map[int]idleResult{}
		pre := t.proc.idle().rssKB
		for i, n := range counts {
			if t.name == "proxy" && uint64(2*n+200) > lim.Cur { // a proxy holds two connections per stream
				res[t.name][n] = idleResult{skipped: true}
				continue
			}
			r, err := measureIdle(t, n, t.name == "vmcp" && i == len(counts)-1, pre)
			if err != nil {
				return fmt.Errorf("%s, %d sessions: %w (stderr: %s)", t.name, n, err, t.proc.stderr)
			}
			res[t.name][n] = r
		}
	}
	printIdle(counts, res)
	return nil
}

// startIdleTargets starts a stateful echo backend, vmcp and the plain
// proxy in front of it, each with a pprof listener.
func startIdleTargets(tmp string) ([]idleTarget, func(), error) {
	var procs []*proc
	stop := func() {
		for _, p := range procs {
			p.stop()
		}
	}
	start := func(bin string, args ...string) (*proc, string, error) {
		dbg, err := freeAddr()
		if err != nil {
			return nil, "", err
		}
		p, u, err := startListening(bin, append(args, "-pprof", dbg), nil)
		if err == nil {
			p.pprofAddr = dbg
			procs = append(procs, p)
		}
		return p, u, err
	}
	be, beURL, err := start(*echoBin, "-tools", "0")
	if err != nil {
		return nil, stop, fmt.Errorf("echoserver: %w", err)
	}
	vm, vmURL, err := startVMCP(tmp, beURL, "sessions:\n  max: 30000\n")
	if err != nil {
		return nil, stop, fmt.Errorf("vmcp: %w", err)
	}
	procs = append(procs, vm)
	out := []idleTarget{{"direct", beURL, be}, {"vmcp", vmURL, vm}}
	if *plainBin != "none" {
		pp, ppURL, err := start(*plainBin, "-backend", beURL)
		if err != nil {
			return nil, stop, fmt.Errorf("plainproxy: %w", err)
		}
		out = append(out, idleTarget{"proxy", ppURL, pp})
	}
	return out, stop, nil
}

// printIdle prints the idle row: per count the cost per session of each
// target, vmcp's ratios to direct and to the plain proxy, and the targets.
func printIdle(counts []int, res map[string]map[int]idleResult) {
	fmt.Printf("%-28s %-20s %10s %10s %11s %9s %9s %s\n", "row", "metric", "direct", "via vmcp", "plain proxy", "÷direct", "÷proxy", "target")
	for _, n := range counts {
		d, v, p := res["direct"][n], res["vmcp"][n], res["proxy"][n]
		name := fmt.Sprintf("idle Legacy session ×%d", n)
		line := func(metric string, f func(footprint) float64, target string) {
			pv, pr := "—", ""
			if !p.skipped && res["proxy"] != nil {
				pv, pr = fmt.Sprintf("%.1f", f(p.per)), fmtRatio(f(v.per)/f(p.per))
			}
			fmt.Printf("%-28s %-20s %10.1f %10.1f %11s %9s %9s %s\n", name, metric, f(d.per), f(v.per), pv, fmtRatio(f(v.per)/f(d.per)), pr, target)
		}
		line("RSS KB/session", func(f footprint) float64 { return f.rssKB }, verdict(v.per.rssKB <= targetIdleKB, "≤ %.0f KB", targetIdleKB))
		line("goroutines/session", func(f footprint) float64 { return f.goroutines }, verdict(v.per.goroutines <= targetIdleGoroutines, "≤ %.0f", targetIdleGoroutines))
		line("fds/session", func(f footprint) float64 { return f.fds }, "")
		if n == 10000 {
			fmt.Printf("%-28s %-20s %10.0f %10.0f %11s %9s %9s %s\n", name, "process RSS MiB", d.loadedRSS/1024, v.loadedRSS/1024, "", "", "",
				verdict(v.loadedRSS/1024 <= targetIdleTotalMiB, "≤ %.0f MiB", targetIdleTotalMiB))
		}
	}
	last := res["vmcp"][counts[len(counts)-1]]
	fmt.Printf("%-28s %-20s %10s %10s %11s %9s %9s %s\n", "after they close", "vmcp RSS MiB pre/now", fmt.Sprintf("%.0f", last.before/1024),
		fmt.Sprintf("%.0f", last.afterRSS/1024), fmt.Sprintf("in %.0fs", last.after.Seconds()), fmtRatio(last.afterRSS/last.before), "",
		verdict(last.returned && last.after <= *idleSettle, "≤ 2× before, within %s", *idleSettle))
}
