// Command bench measures vmcp against the backend it fronts, every process
// separate: an echo backend (test/bench/echoserver), vmcp (bin/vmcp serve)
// and this program's go-sdk clients, all on one machine.
//
// For each row (a Legacy client to a stateful backend, a Modern client to a
// stateless backend, a Legacy client to a stateless backend: relayed on a
// Modern backend session, which the go-sdk served end to end until
// 2026-12-02) it runs, directly against the backend and through
// vmcp, in alternating rounds (medians reported):
//
//   - c=1: one session calling tools/call echo back to back → p50, req/s
//   - c=N: N client sessions calling concurrently → req/s, and vmcp's CPU
//     time (/proc/PID/stat utime+stime) and allocations (/debug/vars
//     memstats via vmcp serve --pprof) per proxied call
//   - a full tools/list walk (every page) → time per walk
//
// The walk row (walk.go) walks a large catalogue (2 backends × 5,000
// tools) on both revisions: vmcp CPU µs and walk time per tool listed,
// vmcp peak RSS. The idle and fan-out rows measure idle sessions and
// list_changed fan-out.
//
// and prints the ratios vmcp/direct with PASS/MISS against the targets,
// beside the same ratios for a plain reverse proxy (test/bench/plainproxy):
// what one more process and HTTP hop costs on this machine.
//
// Then the idle row (idle.go), the fan-out row (fanout.go) and two cluster
// rows, each on a private redis-server (redis-server from PATH):
//
//   - redis (redis_row.go): one node, -redis-sessions Legacy sessions →
//     Redis commands executed (INFO commandstats deltas) and requests sent
//     (a counting proxy, test/internal/redisstat) per session start, per
//     tools/call and per DELETE (median of batches of -conc sessions, so
//     the node's periodic refreshes stay out), per idle session-minute
//     (one -redis-idle window less the node's own), keys and bytes per
//     session; on one redis-server, then on a Redis Cluster of three
//     primaries (-redis-topology; there INFO is summed over the primaries
//     and requests are not counted: the cluster client dials the
//     addresses the cluster announces, past any proxy)
//
//   - forward (forward_row.go): sessions created on node A, called on A,
//     on node B, which forwards to A, and through the plain proxy to A →
//     c=1 p50 of each and what it adds to A's, c=N throughput of each
//
//   - ratelimit (ratelimit_row.go): on the Legacy and the Modern row, vmcp
//     with a rate-limit rule every call matches, in memory and on Redis,
//     against the same vmcp without it → c=N throughput and vmcp CPU per
//     call as ratios, Redis script runs per check (shortened rounds)
//
//   - progress (progress_row.go): one call whose backend sends
//     -progress-count notifications/progress, Legacy and Modern clients,
//     directly and through vmcp → time and vmcp peak RSS as ratios
//
//   - tuning (tuning_row.go): each piece of tuning machinery switched off
//     in one vmcp against vmcp with all on, on the rows it targets → off ÷
//     on (issue 28)
//
//     go run ./test/bench [-vmcp bin/vmcp] [-rounds 3] [-c1 3s] [-cN 3s] [-rows redis,forward]
package main

import (
	"flag"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// Targets.
const (
	targetThroughput = 0.80  // c=N req/s via vmcp ≥ 0.8 × direct
	targetLatency    = 1.25  // c=1 p50 via vmcp ≤ 1.25 × direct
	targetCPU        = 400.0 // vmcp CPU µs per proxied call (c=N run)
	targetPeakRSS    = 40.0  // Legacy row: vmcp peak RSS in MB (10^6 bytes) over the row, at default settings
)

var (
	vmcpBin    = flag.String("vmcp", "bin/vmcp", "vmcp binary")
	echoBin    = flag.String("echoserver", "", "echoserver binary (default: built from ./test/bench/echoserver)")
	plainBin   = flag.String("plainproxy", "", "plain reverse proxy binary, measured as the floor of any proxy (default: built from ./test/bench/plainproxy; \"none\" skips it)")
	rounds     = flag.Int("rounds", 3, "alternating rounds per measurement (medians reported)")
	dur1       = flag.Duration("c1", 3*time.Second, "duration of one c=1 run")
	durN       = flag.Duration("cN", 3*time.Second, "duration of one c=N run")
	conc       = flag.Int("conc", 32, "concurrent client sessions of the c=N run")
	walkTime   = flag.Duration("walk", 600*time.Millisecond, "time spent on tools/list walks per round")
	nTools     = flag.Int("tools", 200, "extra backend tools (the list walk sees tools+2: echo and touch too)")
	pageSize   = flag.Int("page-size", 50, "tools/list page size, backend and vmcp")
	rowsFlag   = flag.String("rows", "legacy,modern,sdk,walk,idle,age,fanout,redis,forward,ratelimit,search,progress,tuning", "rows to run: legacy, modern, sdk (a Legacy client of a stateless backend), walk, idle, age (long-lived Legacy sessions on a stdio backend), fanout, redis, forward, ratelimit (a matching rate-limit rule in memory and on Redis), search (tool search on LiveMCPBench), progress (100,000 progress notifications in one call, both revisions), tuning (each piece of tuning machinery off ÷ on)")
	profileDir = flag.String("profile", "", "if set, write vmcp CPU and alloc profiles of one c=N run per row here")
	vmcpEnv    = flag.String("vmcp-env", "", "extra environment for vmcp, e.g. GOGC=200 (comma separated)")
	verbose    = flag.Bool("v", false, "print every round")
)

const legacyVersion = "2025-11-25"

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

type row struct {
	name      string
	client    string // protocol version pinned by the client ("" = SDK default, Modern)
	stateless bool   // backend mode
}

// result is one measurement of one target (direct or vmcp) in one round.
type result struct {
	p50        time.Duration // c=1
	rps1       float64       // c=1
	rpsN       float64       // c=N
	walk       time.Duration // per full tools/list walk
	cpuUS      float64       // vmcp CPU µs per call in the c=N run (vmcp only)
	allocs     float64       // vmcp mallocs per call in the c=N run (vmcp only)
	bytes      float64       // vmcp bytes allocated per call (vmcp only)
	beCPUUS    float64       // backend CPU µs per call in the c=N run
	rssMiB     float64       // vmcp's peak resident memory (VmHWM) at the end of the row
	floorCPUUS float64       // the plain proxy's CPU µs per call in the c=N run (vmcp's result only)
}

func run() error {
	tmp, err := os.MkdirTemp("", "vmcp-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, b := range []struct {
		bin  *string
		name string
	}{{echoBin, "echoserver"}, {plainBin, "plainproxy"}} {
		if err := buildUnset(tmp, b.bin, b.name); err != nil {
			return err
		}
	}
	if _, err := os.Stat(*vmcpBin); err != nil {
		return fmt.Errorf("vmcp binary: %w (run make build)", err)
	}
	rows, extra, err := parseRows(*rowsFlag)
	if err != nil {
		return err
	}
	startLoad := loadavg()
	if l, _ := strconv.ParseFloat(strings.Fields(startLoad + " 0")[0], 64); l > 1 {
		fmt.Printf("warning: load average %s before starting: other processes use the CPU, so figures will be noisy\n", startLoad)
	}
	fmt.Printf("vmcp bench: %d CPUs, %d rounds", runtime.NumCPU(), *rounds)
	if len(rows) > 0 {
		fmt.Printf(", c=1 %s, c=%d %s, tools/list walk over %d tools (page size %d)", *dur1, *conc, *durN, wantTools(), *pageSize)
	}
	fmt.Println()
	var out []summary
	for _, r := range rows {
		d, v, q, err := runRow(tmp, r)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		out = append(out, summary{r, d, v, q})
	}
	if len(out) > 0 {
		printCalls(out, startLoad)
	}
	for _, x := range []struct {
		name string
		run  func(string) error
	}{{"walk", runWalk}, {"idle", runIdle}, {"age", runAge}, {"fanout", runFanout}, {"redis", runRedis}, {"forward", runForward}, {"ratelimit", runRateLimit}, {"search", runSearch}, {"progress", runProgress}, {"tuning", runTuning}} {
		if !extra[x.name] {
			continue
		}
		if err := x.run(tmp); err != nil {
			return err
		}
	}
	return nil
}

// buildUnset builds ./test/bench/NAME into tmp when *bin is empty and
// points *bin at it.
func buildUnset(tmp string, bin *string, name string) error {
	if *bin != "" {
		return nil
	}
	*bin = filepath.Join(tmp, name)
	cmd := exec.Command("go", "build", "-o", *bin, "./test/bench/"+name)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building %s: %w", name, err)
	}
	return nil
}

// parseRows splits -rows into the call rows and the set of other rows.
func parseRows(list string) ([]row, map[string]bool, error) {
	var rows []row
	extra := map[string]bool{}
	for _, r := range strings.Split(list, ",") {
		switch r = strings.TrimSpace(r); r {
		case "legacy":
			rows = append(rows, row{"Legacy client → stateful backend", legacyVersion, false})
		case "modern":
			rows = append(rows, row{"Modern client → stateless backend", "", true})
		case "sdk": // a Legacy client, a Modern backend session: relayed (the go-sdk path before)
			rows = append(rows, row{"Legacy client → stateless backend", legacyVersion, true})
		case "walk", "idle", "age", "fanout", "redis", "forward", "ratelimit", "search", "progress", "tuning":
			extra[r] = true
		default:
			return nil, nil, fmt.Errorf("-rows: unknown row %q", r)
		}
	}
	return rows, extra, nil
}

// summary is one call row's result.
type summary struct {
	row          row
	direct, vmcp result
	ratio        ratios
}

// printCalls prints the call rows' table.
func printCalls(out []summary, startLoad string) {
	fmt.Println()
	fmt.Println("Figures are medians over rounds; ratios are medians of each round's vmcp/direct ratio (direct and vmcp run interleaved).")
	fmt.Println("plain proxy: the same ratio for a plain net/http reverse proxy (test/bench/plainproxy), the floor of any proxy here.")
	fmt.Printf("load average before/after: %s / %s\n", startLoad, loadavg())
	fmt.Printf("%-34s %-22s %10s %10s %8s %11s %s\n", "row", "metric", "direct", "via vmcp", "ratio", "plain proxy", "target")
	for _, s := range out {
		d, v, q := s.direct, s.vmcp, s.ratio
		line := func(metric, dv, vv string, ratio, floor float64, target string) {
			fmt.Printf("%-34s %-22s %10s %10s %8s %11s %s\n", s.row.name, metric, dv, vv, fmtRatio(ratio), fmtRatio(floor), target)
		}
		f := q.floor
		if f == nil {
			f = &ratios{}
		}
		tr := q.rpsN
		line(fmt.Sprintf("c=%d throughput req/s", *conc), fmt.Sprintf("%.0f", d.rpsN), fmt.Sprintf("%.0f", v.rpsN), tr, f.rpsN, verdict(tr >= targetThroughput, "≥ %.2f×", targetThroughput))
		lr := q.p50
		line("c=1 p50 latency", fmtDur(d.p50), fmtDur(v.p50), lr, f.p50, verdict(lr <= targetLatency, "≤ %.2f×", targetLatency))
		line("c=1 throughput req/s", fmt.Sprintf("%.0f", d.rps1), fmt.Sprintf("%.0f", v.rps1), q.rps1, f.rps1, "")
		line("tools/list walk", fmtDur(d.walk), fmtDur(v.walk), q.walk, f.walk, "")
		line("vmcp CPU µs/call", "", fmt.Sprintf("%.0f", v.cpuUS), 0, 0, verdict(v.cpuUS <= targetCPU, "≤ %.0f µs", targetCPU))
		if q.floor != nil {
			printVsProxy(s, f)
		}
		line("vmcp allocs/call", "", fmt.Sprintf("%.0f", v.allocs), 0, 0, "")
		line("vmcp KB alloc/call", "", fmt.Sprintf("%.1f", v.bytes/1024), 0, 0, "")
		line("vmcp peak RSS MiB", "", fmt.Sprintf("%.0f", v.rssMiB), 0, 0, "")
		if s.row.client != "" && !s.row.stateless { // issue 15: under c=32 Legacy calls, ≤ 40 MB
			mb := v.rssMiB * (1 << 20) / 1e6
			line("vmcp peak RSS MB", "", fmt.Sprintf("%.1f", mb), 0, 0, verdict(mb <= targetPeakRSS, "≤ %.0f MB", targetPeakRSS))
		}
		line("backend CPU µs/call", fmt.Sprintf("%.0f", d.beCPUUS), fmt.Sprintf("%.0f", v.beCPUUS), v.beCPUUS/d.beCPUUS, 0, "")
	}
}

// printVsProxy prints vmcp against the plain proxy (issue 15's call-path
// targets): throughput ≥ the proxy's, p50 ≤ 1.05× the proxy's, and, on
// the Modern row, CPU per call ≤ the proxy's.
func printVsProxy(s summary, f *ratios) {
	v, q := s.vmcp, s.ratio
	line := func(metric, vv string, ratio float64, target string) {
		fmt.Printf("%-34s %-22s %10s %10s %8s %11s %s\n", s.row.name, metric, "", vv, fmtRatio(ratio), "", target)
	}
	tr, lr := q.rpsN/f.rpsN, q.p50/f.p50
	line("c=N throughput ÷ proxy", "", tr, verdict(tr >= 1, "≥ 1.00× proxy"))
	line("c=1 p50 ÷ proxy", "", lr, verdict(lr <= 1.05, "≤ 1.05× proxy"))
	if v.floorCPUUS > 0 {
		cr, target := v.cpuUS/v.floorCPUUS, ""
		if s.row.client == "" { // the Modern row
			target = verdict(cr <= 1, "≤ 1.00× proxy")
		}
		line("proxy CPU µs/call", fmt.Sprintf("%.0f", v.floorCPUUS), 0, "")
		line("vmcp CPU ÷ proxy", "", cr, target)
	}
}

func verdict(ok bool, format string, args ...any) string {
	t := fmt.Sprintf(format, args...)
	if ok {
		return "PASS (" + t + ")"
	}
	return "MISS (" + t + ")"
}

func fmtRatio(r float64) string {
	if r == 0 {
		return ""
	}
	for _, t := range []float64{targetThroughput, targetLatency} {
		if math.Abs(r-t) < 0.005 { // would round onto the target: show the side
			return fmt.Sprintf("%.3f×", r)
		}
	}
	return fmt.Sprintf("%.2f×", r)
}

func fmtDur(d time.Duration) string {
	switch {
	case d >= 10*time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.0fµs", float64(d)/1e3)
	}
}
