package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// target is one endpoint under test with its client sessions: one for c=1
// and the list walk, conc for c=N.
type target struct {
	name string
	url  string
	vmcp *proc // nil for direct
	hop  *proc // the process between client and backend (vmcp or the plain proxy); nil for direct
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
	if n, err := walk(t.one); t.name != "proxy" && (err != nil || n != wantTools()) { // the floor is measured on calls only
		return fmt.Errorf("tools/list walk: %d tools, err %v (want %d)", n, err, wantTools())
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

// acc accumulates one target's measurements within a round.
type acc struct {
	lat            []time.Duration
	t1             time.Duration
	nN, allN       int64
	tN             time.Duration
	cpu, beCPU     float64
	mallocs, bytes uint64
	walks          []time.Duration
}

// order is the targets' order in slice k: each target first in turn.
func order(n, k int) []int {
	o := make([]int, n)
	for i := range o {
		o[i] = (i + k) % n
	}
	return o
}

// round measures every target once, interleaved: c=1 slices, then c=N
// slices, then tools/list walks, each alternating between the targets (the
// order flips every slice).
func round(targets []*target, profile bool, r row) ([]result, error) {
	accs := make([]acc, len(targets))
	if err := roundC1(targets, accs); err != nil {
		return nil, err
	}
	if err := roundCN(targets, accs, profile, r); err != nil {
		return nil, err
	}
	if err := roundWalks(targets, accs); err != nil {
		return nil, err
	}
	out := make([]result, len(targets))
	for j, a := range accs {
		out[j] = a.result(targets[j])
	}
	return out, nil
}

// roundC1 runs the c=1 slices.
func roundC1(targets []*target, accs []acc) error {
	for k := 0; k < max(1, int(*dur1/slice1)); k++ {
		for _, j := range order(len(targets), k) {
			a := &accs[j]
			start := time.Now()
			deadline := start.Add(min(slice1, *dur1))
			for now := start; now.Before(deadline); {
				if _, err := targets[j].one.CallTool(ctx, callParams); err != nil {
					return fmt.Errorf("%s: %w", targets[j].name, err)
				}
				end := time.Now()
				a.lat = append(a.lat, end.Sub(now))
				now = end
			}
			a.t1 += time.Since(start)
		}
	}
	return nil
}

// roundCN runs the c=N slices, with the hop's and the backend's CPU and
// vmcp's allocations; with profile, vmcp's profiles of the first.
func roundCN(targets []*target, accs []acc, profile bool, r row) error {
	var stopProfile func() error
	defer func() {
		if stopProfile != nil {
			if err := stopProfile(); err != nil {
				fmt.Fprintln(os.Stderr, "bench: profile:", err)
			}
		}
	}()
	for k := 0; k < max(1, int(*durN/sliceN)); k++ {
		for _, j := range order(len(targets), k) {
			t, a := targets[j], &accs[j]
			if profile && t.vmcp != nil && stopProfile == nil {
				stopProfile = t.vmcp.startProfile(strings.Fields(strings.ToLower(r.name))[0])
			}
			cpu0, be0 := t.hop.cpu(), t.be.cpu()
			ms0 := t.vmcp.memstats()
			d := min(sliceN, *durN)
			n, all, err := t.concurrent(d)
			if err != nil {
				return fmt.Errorf("%s: %w", t.name, err)
			}
			ms1 := t.vmcp.memstats()
			a.allN += all
			a.nN += n
			a.tN += d
			a.cpu += t.hop.cpu() - cpu0
			a.beCPU += t.be.cpu() - be0
			a.mallocs += ms1.Mallocs - ms0.Mallocs
			a.bytes += ms1.TotalAlloc - ms0.TotalAlloc
		}
	}
	return nil
}

// roundWalks runs full tools/list walks (not through the plain proxy: the
// floor is measured on calls only).
func roundWalks(targets []*target, accs []acc) error {
	wd := time.Now().Add(2 * *walkTime)
	for k := 0; k < 6 || time.Now().Before(wd); k++ {
		for _, j := range order(len(targets), k) {
			if targets[j].name == "proxy" {
				continue
			}
			s := time.Now()
			if n, err := walk(targets[j].one); err != nil || n != wantTools() {
				return fmt.Errorf("%s: tools/list walk: %d tools, %v", targets[j].name, n, err)
			}
			accs[j].walks = append(accs[j].walks, time.Since(s))
		}
	}
	return nil
}

// result is what a measured for target t.
func (a acc) result(t *target) result {
	var m result
	slices.Sort(a.lat)
	m.p50 = a.lat[len(a.lat)/2]
	m.rps1 = float64(len(a.lat)) / a.t1.Seconds()
	m.rpsN = float64(a.nN) / a.tN.Seconds()
	m.beCPUUS = a.beCPU * 1e6 / float64(a.allN)
	if t.hop != nil {
		m.cpuUS = a.cpu * 1e6 / float64(a.allN) // vmcp's, or the plain proxy's
	}
	if t.vmcp != nil {
		m.allocs = float64(a.mallocs) / float64(a.allN)
		m.bytes = float64(a.bytes) / float64(a.allN)
	}
	if len(a.walks) > 0 {
		slices.Sort(a.walks)
		m.walk = a.walks[len(a.walks)/2]
	}
	return m
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

// fixedTools are the echoserver's tools besides -tools: echo, touch and
// progress.
const fixedTools = 3

// wantTools is the number of tools a full walk sees: the fixed ones and
// -tools fillers.
func wantTools() int { return *nTools + fixedTools }
