package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The walk row (issue 15): full tools/list walks (every page) of a large
// catalogue. Two echo backends with -walk-tools extra tools each, vmcp in
// front of both (prefix strategy: every name is kept); for each revision
// (a Legacy 2025-11-25 client with Mcp-Session-Id on stateful backends, a
// Modern 2026-07-28 client on stateless ones) one client walks, for
// -walk-round per target per round, interleaved: directly one backend
// (its tools: half of vmcp's catalogue), vmcp (both backends' tools, served
// from its catalogue) and the plain proxy in front of that one backend.
// Walks are compared per tool listed (wall time of a walk / its tools),
// since vmcp's walk lists twice the tools of one backend's.
var (
	walkTools = flag.Int("walk-tools", 5000, "extra tools of each of the walk row's two backends")
	walkPage  = flag.Int("walk-page-size", 1000, "tools/list page size of the walk row, backends and vmcp (1000: the default of both)")
	walkRound = flag.Duration("walk-round", 2*time.Second, "time spent walking each target per round in the walk row")
)

// Targets of the walk row.
const (
	targetWalkCPU = 3.0  // vmcp CPU µs per tool listed
	targetWalkRSS = 60.0 // vmcp peak RSS in MB (10^6 bytes)
)

// walkTarget is one endpoint of the walk row with its client session.
type walkTarget struct {
	name string
	url  string
	want int   // tools a full walk lists
	vmcp *proc // nil for direct and the proxy
	cs   *mcp.ClientSession
}

// walkResult is one target's figures in one round (or their medians).
type walkResult struct {
	perTool  time.Duration // wall time of walks / tools listed
	walk     time.Duration // per full walk
	cpuUS    float64       // vmcp CPU µs per tool listed (vmcp only)
	allocs   float64       // vmcp mallocs per tool listed (vmcp only)
	bytes    float64       // vmcp bytes allocated per tool listed (vmcp only)
	ratio    float64       // perTool / direct's perTool, this round
	rssMB    float64       // vmcp peak RSS (VmHWM) over the timed walks, MB
	rss0MB   float64       // vmcp peak RSS before them (its start: listing the backends, one walk), MB
	cpu0     float64       // vmcp CPU seconds before them (the same start)
	walks, n int
}

// walkSummary is one revision's walk row.
type walkSummary struct {
	name string
	res  map[string]walkResult // medians by target name
}

// runWalk runs the walk row on both revisions and prints it.
func runWalk(tmp string) error {
	fmt.Printf("\n== tools/list walks of 2 backends × %d tools (page size %d), %s per target per round\n", *walkTools, *walkPage, *walkRound)
	var out []walkSummary
	for _, rev := range []struct {
		name, version string
		stateless     bool
	}{{"walk Legacy 2025-11-25", legacyVersion, false}, {"walk Modern 2026-07-28", "", true}} {
		res, err := walkRow(tmp, rev.version, rev.stateless)
		if err != nil {
			return fmt.Errorf("%s: %w", rev.name, err)
		}
		out = append(out, walkSummary{rev.name, res})
	}
	printWalk(out)
	return nil
}

// walkRow starts the row's two backends, vmcp and the plain proxy, and
// runs the rounds.
func walkRow(tmp, version string, stateless bool) (map[string]walkResult, error) {
	beArgs := []string{"-tools", strconv.Itoa(*walkTools), "-page-size", strconv.Itoa(*walkPage)}
	if stateless {
		beArgs = append(beArgs, "-stateless")
	}
	var urls []string
	for range 2 {
		be, u, err := startListening(*echoBin, beArgs, nil)
		if err != nil {
			return nil, fmt.Errorf("echoserver: %w", err)
		}
		defer be.stop()
		urls = append(urls, u)
	}
	vm, vmURL, err := startVMCPConfig(tmp, fmt.Sprintf("backends:\n  - name: a\n    url: %s\n  - name: b\n    url: %s\npagination:\n  page_size: %d\n", urls[0], urls[1], *walkPage))
	if err != nil {
		return nil, fmt.Errorf("vmcp: %w", err)
	}
	defer vm.stop()
	one := *walkTools + fixedTools
	targets := []*walkTarget{{name: "direct", url: urls[0], want: one}, {name: "vmcp", url: vmURL, want: 2 * one, vmcp: vm}}
	if *plainBin != "none" {
		pp, ppURL, err := startListening(*plainBin, []string{"-backend", urls[0]}, nil)
		if err != nil {
			return nil, fmt.Errorf("plainproxy: %w", err)
		}
		defer pp.stop()
		targets = append(targets, &walkTarget{name: "proxy", url: ppURL, want: one})
	}
	for _, t := range targets {
		if err := t.connect(version); err != nil {
			return nil, fmt.Errorf("%s: %w (vmcp stderr: %s)", t.name, err, vm.stderr)
		}
		defer t.cs.Close()
	}
	rss0, cpu0 := vm.peakRSS()*1024*1024/1e6, vm.cpu()
	vm.settleRSS()
	if err := vm.resetPeakRSS(); err != nil {
		return nil, err
	}
	all, err := walkRounds(targets)
	if err != nil {
		return nil, err
	}
	out := map[string]walkResult{}
	for name, rs := range all {
		out[name] = medianWalk(rs)
	}
	v := out["vmcp"]
	v.rssMB, v.rss0MB, v.cpu0 = vm.peakRSS()*1024*1024/1e6, rss0, cpu0
	out["vmcp"] = v
	return out, nil
}

// walkRounds runs -rounds rounds of walks, each target first in turn, and
// returns every round's figures by target name.
func walkRounds(targets []*walkTarget) (map[string][]walkResult, error) {
	all := map[string][]walkResult{}
	for i := range *rounds {
		for k := range targets {
			t := targets[(i+k)%len(targets)]
			r, err := t.walkFor(*walkRound, i == 0 && *profileDir != "" && t.vmcp != nil)
			if err != nil {
				return nil, fmt.Errorf("round %d: %s: %w", i+1, t.name, err)
			}
			all[t.name] = append(all[t.name], r)
		}
		d := all["direct"][i].perTool
		for name := range all {
			all[name][i].ratio = float64(all[name][i].perTool) / float64(d)
		}
		if *verbose {
			for _, t := range targets {
				r := all[t.name][i]
				fmt.Printf("  round %d %-6s %d walks, %s/tool, walk %s, vmcp %.2f µs/tool\n", i+1, t.name, r.walks, time.Duration(r.perTool), fmtDur(r.walk), r.cpuUS)
			}
		}
	}
	return all, nil
}

// connect opens the target's session and walks once, waiting (up to 15 s)
// until the walk lists every tool (vmcp may be ready before it has listed
// both backends).
func (t *walkTarget) connect(version string) error {
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-walk", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: t.url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return err
	}
	t.cs = cs
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		n, err := walk(cs)
		if err == nil && n == t.want {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("tools/list walk: %d tools, err %v (want %d)", n, err, t.want)
		}
	}
}

// walkFor walks the target's tools back to back for d (at least once) and
// returns the figures; profile takes vmcp CPU and alloc profiles of it.
func (t *walkTarget) walkFor(d time.Duration, profile bool) (walkResult, error) {
	var r walkResult
	var stop func() error
	if profile {
		tag := "walk-" + t.cs.InitializeResult().ProtocolVersion
		if b, err := get("http://" + t.vmcp.pprofAddr + "/debug/pprof/allocs"); err == nil { // the base: allocations before the walks
			_ = os.MkdirAll(*profileDir, 0o755)
			_ = os.WriteFile(filepath.Join(*profileDir, "vmcp-"+tag+".allocs-base.pprof"), b, 0o644)
		}
		stop = t.vmcp.startProfileFor(tag, int(d.Seconds()))
	}
	cpu0, ms0 := t.vmcp.cpu(), t.vmcp.memstats()
	start := time.Now()
	for r.walks == 0 || time.Since(start) < d {
		n, err := walk(t.cs)
		if err != nil && t.vmcp == nil { // the backend or proxy dropped a request under load: once more
			fmt.Fprintf(os.Stderr, "bench: %s: tools/list walk: %v; walking again\n", t.name, err)
			n, err = walk(t.cs)
		}
		if err != nil || n != t.want {
			return r, fmt.Errorf("tools/list walk: %d tools, %v (want %d)", n, err, t.want)
		}
		r.walks, r.n = r.walks+1, r.n+n
	}
	el := time.Since(start)
	cpu1, ms1 := t.vmcp.cpu(), t.vmcp.memstats()
	r.perTool, r.walk = el/time.Duration(r.n), el/time.Duration(r.walks)
	if t.vmcp != nil {
		r.cpuUS = (cpu1 - cpu0) * 1e6 / float64(r.n)
		r.allocs = float64(ms1.Mallocs-ms0.Mallocs) / float64(r.n)
		r.bytes = float64(ms1.TotalAlloc-ms0.TotalAlloc) / float64(r.n)
	}
	if stop != nil {
		if err := stop(); err != nil {
			fmt.Println("bench: profile:", err)
		}
	}
	return r, nil
}

// medianWalk is the median of each figure over rounds.
func medianWalk(rs []walkResult) walkResult {
	pick := func(f func(walkResult) float64) float64 { return medianBy(rs, f) }
	return walkResult{
		perTool: time.Duration(pick(func(r walkResult) float64 { return float64(r.perTool) })),
		walk:    time.Duration(pick(func(r walkResult) float64 { return float64(r.walk) })),
		cpuUS:   pick(func(r walkResult) float64 { return r.cpuUS }),
		allocs:  pick(func(r walkResult) float64 { return r.allocs }),
		bytes:   pick(func(r walkResult) float64 { return r.bytes }),
		ratio:   pick(func(r walkResult) float64 { return r.ratio }),
	}
}

// printWalk prints the walk row's table.
func printWalk(out []walkSummary) {
	fmt.Println()
	fmt.Printf("direct: one backend's walk (%d tools); via vmcp: both backends' (%d tools, served from vmcp's catalogue); plain proxy: in front of that one backend.\n", *walkTools+fixedTools, 2*(*walkTools+fixedTools))
	fmt.Println("per tool: a walk's wall time / the tools it lists; ratios are medians of each round's ratio to direct.")
	fmt.Println("peak RSS walks: vmcp's VmHWM over the timed walks (reset once its RSS settled after start); start: its VmHWM before them (start, listing both backends, one walk).")
	fmt.Printf("%-24s %-22s %10s %10s %8s %11s %s\n", "row", "metric", "direct", "via vmcp", "ratio", "plain proxy", "target")
	for _, s := range out {
		d, v, p := s.res["direct"], s.res["vmcp"], s.res["proxy"]
		line := func(metric, dv, vv string, ratio, floor float64, target string) {
			fmt.Printf("%-24s %-22s %10s %10s %8s %11s %s\n", s.name, metric, dv, vv, fmtRatio(ratio), fmtRatio(floor), target)
		}
		us := func(x time.Duration) string { return fmt.Sprintf("%.1fµs", float64(x)/1e3) }
		line("walk time per tool", us(d.perTool), us(v.perTool), v.ratio, p.ratio, "")
		line("full walk", fmtDur(d.walk), fmtDur(v.walk), 0, 0, "")
		line("vmcp CPU µs/tool", "", fmt.Sprintf("%.2f", v.cpuUS), 0, 0, verdict(v.cpuUS <= targetWalkCPU, "≤ %.0f µs", targetWalkCPU))
		line("vmcp allocs/tool", "", fmt.Sprintf("%.1f", v.allocs), 0, 0, "")
		line("vmcp B alloc/tool", "", fmt.Sprintf("%.0f", v.bytes), 0, 0, "")
		line("vmcp peak RSS MB walks", "", fmt.Sprintf("%.0f", v.rssMB), 0, 0, verdict(v.rssMB <= targetWalkRSS, "≤ %.0f MB", targetWalkRSS))
		line("vmcp peak RSS MB start", "", fmt.Sprintf("%.0f", v.rss0MB), 0, 0, verdict(v.rss0MB <= targetWalkRSS, "≤ %.0f MB", targetWalkRSS))
		line("vmcp CPU s at start", "", fmt.Sprintf("%.2f", v.cpu0), 0, 0, "")
	}
}

// settleRSS waits (at most 30 s) until p's resident set has not shrunk
// by more than 1 MiB for 3 s: the runtime hands back, in steps seconds
// apart, what its start used (listing the backends).
func (p *proc) settleRSS() {
	low, since := p.statusKB("VmRSS:"), time.Now()
	for deadline := time.Now().Add(30 * time.Second); time.Since(since) < 3*time.Second && time.Now().Before(deadline); {
		time.Sleep(250 * time.Millisecond)
		if rss := p.statusKB("VmRSS:"); rss < low-1024 {
			low, since = rss, time.Now()
		}
	}
}

// resetPeakRSS sets p's VmHWM to its current RSS (Linux clear_refs 5).
func (p *proc) resetPeakRSS() error {
	return os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", p.cmd.Process.Pid), []byte("5"), 0)
}
