// Command bench measures vmcp against the backend it fronts, every process
// separate: an echo backend (test/bench/echoserver), vmcp (bin/vmcp serve)
// and this program's go-sdk clients, all on one machine.
//
// For each row (a Legacy client to a stateful backend, a Modern client to a
// stateless backend) it runs, directly against the backend and through
// vmcp, in alternating rounds (medians reported):
//
//   - c=1: one session calling tools/call echo back to back → p50, req/s
//   - c=N: N client sessions calling concurrently → req/s, and vmcp's CPU
//     time (/proc/PID/stat utime+stime) and allocations (/debug/vars
//     memstats via vmcp serve --pprof) per proxied call
//   - a full tools/list walk (every page) → time per walk
//
// and prints the ratios vmcp/direct with PASS/MISS against the targets,
// beside the same ratios for a plain reverse proxy (test/bench/plainproxy):
// what one more process and HTTP hop costs on this machine.
//
//	go run ./test/bench [-vmcp bin/vmcp] [-rounds 3] [-c1 3s] [-cN 3s]
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Targets.
const (
	targetThroughput = 0.80  // c=N req/s via vmcp ≥ 0.8 × direct
	targetLatency    = 1.25  // c=1 p50 via vmcp ≤ 1.25 × direct
	targetCPU        = 400.0 // vmcp CPU µs per proxied call (c=N run)
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
	nTools     = flag.Int("tools", 200, "extra backend tools (the list walk sees tools+1)")
	pageSize   = flag.Int("page-size", 50, "tools/list page size, backend and vmcp")
	rowsFlag   = flag.String("rows", "legacy,modern", "rows to run: legacy, modern")
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
	p50     time.Duration // c=1
	rps1    float64       // c=1
	rpsN    float64       // c=N
	walk    time.Duration // per full tools/list walk
	cpuUS   float64       // vmcp CPU µs per call in the c=N run (vmcp only)
	allocs  float64       // vmcp mallocs per call in the c=N run (vmcp only)
	bytes   float64       // vmcp bytes allocated per call (vmcp only)
	beCPUUS float64       // backend CPU µs per call in the c=N run
	rssMiB  float64       // vmcp's peak resident memory (VmHWM) at the end of the row
}

func run() error {
	tmp, err := os.MkdirTemp("", "vmcp-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	if *echoBin == "" {
		*echoBin = filepath.Join(tmp, "echoserver")
		cmd := exec.Command("go", "build", "-o", *echoBin, "./test/bench/echoserver")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building echoserver: %w", err)
		}
	}
	if *plainBin == "" {
		*plainBin = filepath.Join(tmp, "plainproxy")
		cmd := exec.Command("go", "build", "-o", *plainBin, "./test/bench/plainproxy")
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building plainproxy: %w", err)
		}
	}
	if _, err := os.Stat(*vmcpBin); err != nil {
		return fmt.Errorf("vmcp binary: %w (run make build)", err)
	}
	var rows []row
	for _, r := range strings.Split(*rowsFlag, ",") {
		switch strings.TrimSpace(r) {
		case "legacy":
			rows = append(rows, row{"Legacy client → stateful backend", legacyVersion, false})
		case "modern":
			rows = append(rows, row{"Modern client → stateless backend", "", true})
		}
	}
	startLoad := loadavg()
	if l, _ := strconv.ParseFloat(strings.Fields(startLoad + " 0")[0], 64); l > 1 {
		fmt.Printf("warning: load average %s before starting: other processes use the CPU, so figures will be noisy\n", startLoad)
	}
	fmt.Printf("vmcp bench: %d CPUs, %d rounds, c=1 %s, c=%d %s, tools/list walk over %d tools (page size %d)\n",
		runtime.NumCPU(), *rounds, *dur1, *conc, *durN, *nTools+1, *pageSize)
	type summary struct {
		row          row
		direct, vmcp result
		ratio        ratios
	}
	var out []summary
	for _, r := range rows {
		d, v, q, err := runRow(tmp, r)
		if err != nil {
			return fmt.Errorf("%s: %w", r.name, err)
		}
		out = append(out, summary{r, d, v, q})
	}
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
		line("vmcp allocs/call", "", fmt.Sprintf("%.0f", v.allocs), 0, 0, "")
		line("vmcp KB alloc/call", "", fmt.Sprintf("%.1f", v.bytes/1024), 0, 0, "")
		line("vmcp peak RSS MiB", "", fmt.Sprintf("%.0f", v.rssMiB), 0, 0, "")
		line("backend CPU µs/call", fmt.Sprintf("%.0f", d.beCPUUS), fmt.Sprintf("%.0f", v.beCPUUS), v.beCPUUS/d.beCPUUS, 0, "")
	}
	return nil
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

// runRow starts the row's backend and vmcp, connects the clients and runs
// the alternating rounds.
func runRow(tmp string, r row) (direct, via result, q ratios, err error) {
	fmt.Printf("\n== %s\n", r.name)
	beArgs := []string{"-tools", strconv.Itoa(*nTools), "-page-size", strconv.Itoa(*pageSize)}
	if r.stateless {
		beArgs = append(beArgs, "-stateless")
	}
	be, beURL, err := startListening(*echoBin, beArgs, nil)
	if err != nil {
		return direct, via, q, fmt.Errorf("echoserver: %w", err)
	}
	defer be.stop()
	vm, vmURL, err := startVMCP(tmp, beURL)
	if err != nil {
		return direct, via, q, fmt.Errorf("vmcp: %w", err)
	}
	defer vm.stop()
	defer func() {
		if err != nil { // show why, if a child failed
			fmt.Fprintf(os.Stderr, "--- vmcp stderr (tail):\n%s\n--- echoserver stderr (tail):\n%s\n", vm.stderr, be.stderr)
		}
	}()

	targets := []*target{
		{name: "direct", url: beURL},
		{name: "vmcp", url: vmURL, vmcp: vm},
	}
	if *plainBin != "none" {
		pp, ppURL, perr := startListening(*plainBin, []string{"-backend", beURL}, nil)
		if perr != nil {
			return direct, via, q, fmt.Errorf("plainproxy: %w", perr)
		}
		defer pp.stop()
		defer func() {
			if err != nil {
				fmt.Fprintf(os.Stderr, "--- plainproxy stderr (tail):\n%s\n", pp.stderr)
			}
		}()
		targets = append(targets, &target{name: "proxy", url: ppURL})
	}
	for _, t := range targets {
		t.be = be
		if err := t.connect(r.client); err != nil {
			return direct, via, q, fmt.Errorf("%s: %w", t.name, err)
		}
		defer t.close()
		if err := t.warm(); err != nil {
			return direct, via, q, fmt.Errorf("%s: %w", t.name, err)
		}
	}
	res := map[string][]result{}
	for i := range *rounds {
		ms, err := round(targets, i == 0 && *profileDir != "", r)
		if err != nil {
			return direct, via, q, fmt.Errorf("round %d: %w", i+1, err)
		}
		for j, t := range targets {
			m := ms[j]
			if *verbose {
				fmt.Printf("  round %d %-6s c=1 p50 %s %.0f req/s | c=%d %.0f req/s | walk %s | vmcp %.0f µs/call %.0f allocs/call | backend %.0f µs/call\n",
					i+1, t.name, fmtDur(m.p50), m.rps1, *conc, m.rpsN, fmtDur(m.walk), m.cpuUS, m.allocs, m.beCPUUS)
			}
			res[t.name] = append(res[t.name], m)
		}
	}
	for i := range res["direct"] {
		d := res["direct"][i]
		q.all = append(q.all, ratioOf(res["vmcp"][i], d))
		if p := res["proxy"]; len(p) > i {
			if q.floor == nil {
				q.floor = &ratios{}
			}
			q.floor.all = append(q.floor.all, ratioOf(p[i], d))
		}
	}
	via = median(res["vmcp"])
	via.rssMiB = vm.peakRSS()
	floor := q.floor
	q = q.median()
	if floor != nil {
		m := floor.median()
		q.floor = &m
	}
	return median(res["direct"]), via, q, nil
}

// ratios are vmcp/direct ratios of one round (all: every round's); floor
// holds the plain proxy's.
type ratios struct {
	rpsN, p50, rps1, walk float64
	all                   []ratios
	floor                 *ratios
}

func ratioOf(v, d result) ratios {
	return ratios{
		rpsN: v.rpsN / d.rpsN,
		p50:  float64(v.p50) / float64(d.p50),
		rps1: v.rps1 / d.rps1,
		walk: float64(v.walk) / float64(d.walk),
	}
}

func (q ratios) median() ratios {
	med := func(f func(ratios) float64) float64 {
		v := make([]float64, len(q.all))
		for i, r := range q.all {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return ratios{
		rpsN: med(func(r ratios) float64 { return r.rpsN }),
		p50:  med(func(r ratios) float64 { return r.p50 }),
		rps1: med(func(r ratios) float64 { return r.rps1 }),
		walk: med(func(r ratios) float64 { return r.walk }),
	}
}

// loadavg is the first three fields of /proc/loadavg.
func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Join(strings.Fields(string(b))[:3], " ")
}

func median(rs []result) result {
	pick := func(f func(result) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	return result{
		p50:     time.Duration(pick(func(r result) float64 { return float64(r.p50) })),
		rps1:    pick(func(r result) float64 { return r.rps1 }),
		rpsN:    pick(func(r result) float64 { return r.rpsN }),
		walk:    time.Duration(pick(func(r result) float64 { return float64(r.walk) })),
		cpuUS:   pick(func(r result) float64 { return r.cpuUS }),
		allocs:  pick(func(r result) float64 { return r.allocs }),
		bytes:   pick(func(r result) float64 { return r.bytes }),
		beCPUUS: pick(func(r result) float64 { return r.beCPUUS }),
	}
}

// target is one endpoint under test with its client sessions: one for c=1
// and the list walk, conc for c=N.
type target struct {
	name string
	url  string
	vmcp *proc // nil for direct
	be   *proc
	one  *mcp.ClientSession
	many []*mcp.ClientSession
}

// ctx is the one long-lived context of every client call: cancelling a
// go-sdk call's context as soon as it returns closes its connection about
// one call in five, which would measure the client, not the server.
var ctx = context.Background()

var callParams = &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hello, vmcp"}}

func (t *target) connect(version string) error {
	// One pooled transport per target, with room for every session's
	// connections (the default of 2 idle per host would churn TCP).
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 0
	tr.MaxIdleConnsPerHost = 4 * (*conc + 1)
	hc := &http.Client{Transport: tr}
	open := func() (*mcp.ClientSession, error) {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
		cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		return c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: t.url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	}
	var err error
	if t.one, err = open(); err != nil {
		return err
	}
	want := legacyVersion
	if version == "" {
		want = "2026-07-28"
	}
	if got := t.one.InitializeResult().ProtocolVersion; got != want {
		return fmt.Errorf("negotiated %s, want %s", got, want)
	}
	for range *conc {
		cs, err := open()
		if err != nil {
			return err
		}
		t.many = append(t.many, cs)
	}
	return nil
}

func (t *target) close() {
	for _, cs := range append(t.many, t.one) {
		if cs != nil {
			_ = cs.Close()
		}
	}
}

// warm checks the echo result and the list walk, and warms connections.
func (t *target) warm() error {
	res, err := t.one.CallTool(ctx, callParams)
	if err != nil {
		return err
	}
	if len(res.Content) != 1 {
		return fmt.Errorf("echo: unexpected result %+v", res)
	}
	if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "hello, vmcp" {
		return fmt.Errorf("echo: unexpected result %+v", res.Content[0])
	}
	if n, err := walk(t.one); t.name != "proxy" && (err != nil || n != *nTools+1) { // the floor is measured on calls only
		return fmt.Errorf("tools/list walk: %d tools, err %v (want %d)", n, err, *nTools+1)
	}
	_, _, err = t.concurrent(300 * time.Millisecond)
	return err
}

func walk(cs *mcp.ClientSession) (int, error) {
	n := 0
	for _, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return n, err
		}
		n++
	}
	return n, nil
}

// sliceN is the length of one c=N slice: the c=N run of each target is cut
// into slices that alternate with the other target's, so both see the same
// background load (other processes on this machine) within a round.
const sliceN = 500 * time.Millisecond

// slice1 is the length of one c=1 slice.
const slice1 = 250 * time.Millisecond

// round measures every target once, interleaved: c=1 slices, then c=N
// slices, then tools/list walks, each alternating between the targets (the
// order flips every slice).
func round(targets []*target, profile bool, r row) ([]result, error) {
	type acc struct {
		lat            []time.Duration
		t1             time.Duration
		nN, allN       int64
		tN             time.Duration
		cpu, beCPU     float64
		mallocs, bytes uint64
		walks          []time.Duration
	}
	accs := make([]acc, len(targets))
	order := func(k int) []int { // each target first in turn
		o := make([]int, len(targets))
		for i := range o {
			o[i] = (i + k) % len(targets)
		}
		return o
	}
	// c=1
	for k := 0; k < max(1, int(*dur1/slice1)); k++ {
		for _, j := range order(k) {
			a := &accs[j]
			start := time.Now()
			deadline := start.Add(min(slice1, *dur1))
			for now := start; now.Before(deadline); {
				if _, err := targets[j].one.CallTool(ctx, callParams); err != nil {
					return nil, fmt.Errorf("%s: %w", targets[j].name, err)
				}
				end := time.Now()
				a.lat = append(a.lat, end.Sub(now))
				now = end
			}
			a.t1 += time.Since(start)
		}
	}
	// c=N, with vmcp's and the backend's CPU and vmcp's allocations
	var stopProfile func() error
	for k := 0; k < max(1, int(*durN/sliceN)); k++ {
		for _, j := range order(k) {
			t, a := targets[j], &accs[j]
			if profile && t.vmcp != nil && stopProfile == nil {
				stopProfile = t.vmcp.startProfile(strings.Fields(strings.ToLower(r.name))[0])
			}
			cpu0, be0 := t.vmcp.cpu(), t.be.cpu()
			ms0 := t.vmcp.memstats()
			d := min(sliceN, *durN)
			n, all, err := t.concurrent(d)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", t.name, err)
			}
			a.allN += all
			cpu1, be1 := t.vmcp.cpu(), t.be.cpu()
			ms1 := t.vmcp.memstats()
			a.nN += n
			a.tN += d
			a.cpu += cpu1 - cpu0
			a.beCPU += be1 - be0
			a.mallocs += ms1.Mallocs - ms0.Mallocs
			a.bytes += ms1.TotalAlloc - ms0.TotalAlloc
		}
	}
	if stopProfile != nil {
		if err := stopProfile(); err != nil {
			fmt.Fprintln(os.Stderr, "bench: profile:", err)
		}
	}
	// tools/list walks
	wd := time.Now().Add(2 * *walkTime)
	for k := 0; k < 6 || time.Now().Before(wd); k++ {
		for _, j := range order(k) {
			if targets[j].name == "proxy" { // the floor is measured on calls only
				continue
			}
			s := time.Now()
			if n, err := walk(targets[j].one); err != nil || n != *nTools+1 {
				return nil, fmt.Errorf("%s: tools/list walk: %d tools, %v", targets[j].name, n, err)
			}
			accs[j].walks = append(accs[j].walks, time.Since(s))
		}
	}
	out := make([]result, len(targets))
	for j, a := range accs {
		m := &out[j]
		slices.Sort(a.lat)
		m.p50 = a.lat[len(a.lat)/2]
		m.rps1 = float64(len(a.lat)) / a.t1.Seconds()
		m.rpsN = float64(a.nN) / a.tN.Seconds()
		m.beCPUUS = a.beCPU * 1e6 / float64(a.allN)
		if targets[j].vmcp != nil {
			m.cpuUS = a.cpu * 1e6 / float64(a.allN)
			m.allocs = float64(a.mallocs) / float64(a.allN)
			m.bytes = float64(a.bytes) / float64(a.allN)
		}
		if len(a.walks) > 0 {
			slices.Sort(a.walks)
			m.walk = a.walks[len(a.walks)/2]
		}
	}
	return out, nil
}

// concurrent runs every c=N session in its own goroutine for d and returns
// the number of calls completed within d, and of all calls completed (the
// ones in flight at the deadline are waited for: their CPU is counted too).
func (t *target) concurrent(d time.Duration) (within, all int64, err error) {
	var n, total atomic.Int64
	var firstErr atomic.Pointer[error]
	var wg sync.WaitGroup
	deadline := time.Now().Add(d)
	for _, cs := range t.many {
		wg.Go(func() {
			for time.Now().Before(deadline) {
				if _, err := cs.CallTool(ctx, callParams); err != nil {
					firstErr.CompareAndSwap(nil, &err)
					return
				}
				total.Add(1)
				if time.Now().Before(deadline) {
					n.Add(1)
				}
			}
		})
	}
	wg.Wait()
	if p := firstErr.Load(); p != nil {
		return 0, 0, *p
	}
	return n.Load(), total.Load(), nil
}

// proc is a child process.
type proc struct {
	cmd       *exec.Cmd
	pprofAddr string // vmcp only
	stderr    *tail
}

func (p *proc) stop() {
	if p == nil || p.cmd.Process == nil {
		return
	}
	_ = p.cmd.Process.Signal(os.Interrupt)
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(3 * time.Second):
		_ = p.cmd.Process.Kill()
		<-done
	}
}

// clockTick is USER_HZ (getconf CLK_TCK), 100 on Linux.
var clockTick = func() float64 {
	out, err := exec.Command("getconf", "CLK_TCK").Output()
	if err != nil {
		return 100
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(string(out)), 64)
	if err != nil || v <= 0 {
		return 100
	}
	return v
}()

// cpu returns the process's user+system CPU time in seconds.
func (p *proc) cpu() float64 {
	if p == nil {
		return 0
	}
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the parenthesised command name: state is field 3,
	// utime 14, stime 15.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / clockTick
}

// peakRSS is the process's peak resident set (VmHWM) in MiB.
func (p *proc) peakRSS() float64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(l, "VmHWM:"); ok {
			kb, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			return kb / 1024
		}
	}
	return 0
}

type memstats struct {
	Mallocs    uint64
	TotalAlloc uint64
	NumGC      uint32
}

// memstats reads vmcp's runtime.MemStats from /debug/vars.
func (p *proc) memstats() memstats {
	var v struct {
		Memstats memstats `json:"memstats"`
	}
	if p == nil || p.pprofAddr == "" {
		return v.Memstats
	}
	resp, err := http.Get("http://" + p.pprofAddr + "/debug/vars")
	if err != nil {
		return v.Memstats
	}
	defer resp.Body.Close()
	_ = json.NewDecoder(resp.Body).Decode(&v)
	return v.Memstats
}

// startProfile starts a CPU profile of vmcp covering the next run; the
// returned func waits for it and saves it with an allocation profile.
func (p *proc) startProfile(tag string) func() error {
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	secs := int(2 * durN.Seconds())
	if secs < 1 {
		secs = 1
	}
	go func() {
		b, err := get(fmt.Sprintf("http://%s/debug/pprof/profile?seconds=%d", p.pprofAddr, secs))
		ch <- res{b, err}
	}()
	return func() error {
		r := <-ch
		if r.err != nil {
			return r.err
		}
		if err := os.MkdirAll(*profileDir, 0o755); err != nil {
			return err
		}
		cpuFile := filepath.Join(*profileDir, "vmcp-"+tag+".cpu.pprof")
		if err := os.WriteFile(cpuFile, r.b, 0o644); err != nil {
			return err
		}
		b, err := get("http://" + p.pprofAddr + "/debug/pprof/allocs")
		if err != nil {
			return err
		}
		allocFile := filepath.Join(*profileDir, "vmcp-"+tag+".allocs.pprof")
		fmt.Printf("  profiles: %s %s\n", cpuFile, allocFile)
		return os.WriteFile(allocFile, b, 0o644)
	}
}

func get(url string) ([]byte, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return io.ReadAll(resp.Body)
}

// startListening starts bin with args and waits for its "listening URL"
// line on stdout.
func startListening(bin string, args, env []string) (*proc, string, error) {
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	p := &proc{cmd: cmd, stderr: &tail{}}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if u, ok := strings.CutPrefix(sc.Text(), "listening "); ok {
				lines <- u
			}
		}
	}()
	select {
	case u := <-lines:
		return p, u, nil
	case <-time.After(10 * time.Second):
		p.stop()
		return nil, "", fmt.Errorf("%s did not start: %s", bin, p.stderr)
	}
}

// startVMCP writes a config fronting backendURL (priority strategy: tool
// names stay bare) and starts vmcp serve with --pprof, waiting for /readyz.
func startVMCP(tmp, backendURL string) (*proc, string, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	pprofAddr, err := freeAddr()
	if err != nil {
		return nil, "", err
	}
	cfg := fmt.Sprintf(`listen: %s
path: /mcp
name: vmcp-bench
backends:
  - name: echo
    url: %s
aggregation:
  conflict_resolution: priority
  priority: [echo]
pagination:
  page_size: %d
`, addr, backendURL, *pageSize)
	path := filepath.Join(tmp, "vmcp-"+strconv.Itoa(os.Getpid())+"-"+strconv.FormatInt(time.Now().UnixNano(), 36)+".yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		return nil, "", err
	}
	cmd := exec.Command(*vmcpBin, "serve", "--config", path, "--pprof", pprofAddr)
	cmd.Env = os.Environ()
	if *vmcpEnv != "" {
		cmd.Env = append(cmd.Env, strings.Split(*vmcpEnv, ",")...)
	}
	p := &proc{cmd: cmd, pprofAddr: pprofAddr, stderr: &tail{}}
	cmd.Stdout, cmd.Stderr = p.stderr, p.stderr
	if err := cmd.Start(); err != nil {
		return nil, "", err
	}
	base := "http://" + addr
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get(base + "/readyz")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p, base + "/mcp", nil
			}
		}
	}
	p.stop()
	return nil, "", errors.New("vmcp not ready within 15s: " + p.stderr.String())
}

func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

// tail keeps the last 4 KiB written (a child's stderr, for errors).
type tail struct {
	mu sync.Mutex
	b  []byte
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > 4096 {
		t.b = t.b[len(t.b)-4096:]
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}
