package main

import (
	"context"
	"flag"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The progress row (issue 28's proof): the echoserver's progress tool
// sends -progress-count notifications/progress for one call with a
// progressToken. A Legacy client (stateful backend) and a Modern client
// (stateless backend) make that call directly and through vmcp, and a
// Modern client through vmcp to a Legacy-only backend (a keyed backend
// session), compared with the Modern direct call. Time: until the
// response and every notification arrived (median of -rounds). vmcp's
// RSS: settled before the first call, its peak (VmHWM, reset then) over
// the row's calls. Target: a Modern call costs no more than a Legacy one.

var progressCount = flag.Int("progress-count", 100_000, "progress row: notifications per call")

// progressTimeout bounds one progress call (the backend's timeout in
// vmcp too): the row measures slowness, it does not fail on it.
const progressTimeout = 120 * time.Second

// progressCase is one line of the row: a client revision and a backend.
type progressCase struct {
	name      string
	version   string // the client's ("" Modern)
	stateless bool   // the backend's mode
	legacy    bool   // the backend serves Legacy revisions only
	direct    bool   // also call the backend directly
}

var progressCases = []progressCase{
	{"Legacy client → stateful backend", legacyVersion, false, false, true},
	{"Modern client → stateless backend", "", true, false, true},
	{"Modern client → Legacy-only backend (keyed)", "", false, true, false},
}

// runProgress runs the progress row.
func runProgress(tmp string) error {
	fmt.Printf("\n== %d progress notifications in one call (medians of %d; noisy on a loaded machine)\n", *progressCount, *rounds)
	fmt.Printf("  %-46s %10s %10s %7s %13s %13s %7s\n", "", "direct", "vmcp", "×", "vmcp RSS MiB", "vmcp peak", "×")
	var modernDirect time.Duration
	for _, c := range progressCases {
		direct, via, rss0, peak, err := progressLine(tmp, c)
		if err != nil {
			return fmt.Errorf("progress row, %s: %w", c.name, err)
		}
		if c.direct && c.version == "" {
			modernDirect = direct
		}
		if !c.direct {
			direct = modernDirect // the Modern client's own direct call
		}
		fmt.Printf("  %-46s %10s %10s %6.2f× %13.1f %13.1f %6.2f×\n", c.name, fmtDur(direct), fmtDur(via),
			float64(via)/float64(direct), rss0, peak, peak/rss0)
	}
	fmt.Println("  ×: vmcp/direct time (keyed: to the Modern direct call); vmcp peak RSS over its RSS before the calls.")
	return nil
}

// progressLine measures one case: the direct and vmcp medians, vmcp's RSS
// before the calls and its peak over them (MiB).
func progressLine(tmp string, c progressCase) (direct, via time.Duration, rss0, peak float64, err error) {
	args := []string{"-tools", "0"}
	if c.stateless {
		args = append(args, "-stateless")
	}
	if c.legacy {
		args = append(args, "-legacy-only")
	}
	be, beURL, err := startListening(*echoBin, args, nil)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer be.stop()
	vm, url, err := startVMCPConfig(tmp, fmt.Sprintf(
		"backends:\n  - name: echo\n    url: %s\n    timeout: %s\naggregation:\n  conflict_resolution: priority\n  priority: [echo]\n",
		beURL, progressTimeout))
	if err != nil {
		return 0, 0, 0, 0, err
	}
	defer vm.stop()
	vm.settleRSS()
	rss0 = vm.statusKB("VmRSS:") / 1024
	if err := vm.resetPeakRSS(); err != nil {
		return 0, 0, 0, 0, err
	}
	var ds, vs []time.Duration
	for range *rounds {
		if c.direct {
			d, err := progressCall(beURL, c.version)
			if err != nil {
				return 0, 0, 0, 0, fmt.Errorf("direct: %w", err)
			}
			ds = append(ds, d)
		}
		v, err := progressCall(url, c.version)
		if err != nil {
			return 0, 0, 0, 0, fmt.Errorf("via vmcp: %w", err)
		}
		vs = append(vs, v)
	}
	return medianDur(ds), medianDur(vs), rss0, vm.peakRSS(), nil
}

// progressCall connects a client of version to url, calls the progress
// tool with a progressToken and returns the time until its result and
// every notification arrived.
func progressCall(url, version string) (time.Duration, error) {
	n := int64(*progressCount)
	var got atomic.Int64
	all := make(chan struct{})
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-progress", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(context.Context, *mcp.ProgressNotificationClientRequest) {
			if got.Add(1) == n {
				close(all)
			}
		},
	})
	cctx, cancel := context.WithTimeout(ctx, progressTimeout)
	defer cancel()
	cs, err := c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return 0, err
	}
	defer cs.Close()
	p := &mcp.CallToolParams{Name: "progress", Arguments: map[string]any{"count": n}}
	p.SetProgressToken("bench")
	start := time.Now()
	res, err := cs.CallTool(cctx, p)
	if err == nil && res.IsError {
		err = fmt.Errorf("progress failed: %v", res.Content)
	}
	if err != nil {
		return 0, err
	}
	select {
	case <-all:
	case <-cctx.Done():
		return 0, fmt.Errorf("%d of %d notifications arrived", got.Load(), n)
	}
	return time.Since(start), nil
}

// medianDur is the middle of ds (0 for none).
func medianDur(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
