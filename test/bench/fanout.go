package main

import (
	"context"
	"flag"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fan-out row: how long one backend tools/list_changed takes to reach
// every listening client through vmcp: -fanout Legacy sessions (their GET
// streams) and as many Modern clients (their subscriptions/listen
// streams). Each round the bench calls the backend's touch tool directly
// (it adds a tool) and times, from just before that call, each client's
// tools/list_changed handler; p50, p99 and the last arrival are reported
// (medians over -rounds).
var fanoutN = flag.Int("fanout", 1000, "listening clients of each revision in the fan-out row")

// targetFanoutP99 is the fan-out target: p99 from the backend's
// notification to the last client's read.
const targetFanoutP99 = 100 * time.Millisecond

// arrivals collects one round's delivery delays.
type arrivals struct {
	mu    sync.Mutex
	t0    time.Time
	got   []time.Duration
	want  int
	done  chan struct{}
	extra int // deliveries after the round completed (duplicates)
}

func (a *arrivals) reset(want int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.t0, a.got, a.want, a.done = time.Now(), a.got[:0], want, make(chan struct{})
}

func (a *arrivals) add() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done == nil || len(a.got) >= a.want {
		a.extra++
		return
	}
	if a.got = append(a.got, time.Since(a.t0)); len(a.got) == a.want {
		close(a.done)
	}
}

// openListeners opens n sessions at version on url whose
// tools/list_changed handler reports to a.
func openListeners(url, version string, n int, a *arrivals) ([]*mcp.ClientSession, *http.Transport, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	hc := &http.Client{Transport: tr}
	out := make([]*mcp.ClientSession, 0, n)
	for range n {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench-fanout", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { a.add() },
		})
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		cs, err := c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
		cancel()
		if err != nil {
			closeIdle(out, tr)
			return nil, nil, fmt.Errorf("opening %d listeners (%s): %w", n, version, err)
		}
		out = append(out, cs)
	}
	return out, tr, nil
}

// quantile is the q-quantile of sorted ds.
func quantile(ds []time.Duration, q float64) time.Duration {
	return ds[min(len(ds)-1, int(q*float64(len(ds))))]
}

// runFanout runs the fan-out row against a stateful echo backend behind vmcp.
func runFanout(tmp string) error {
	fmt.Printf("\n== fan-out of one backend tools/list_changed to %d Legacy GET streams and %d Modern listen streams\n", *fanoutN, *fanoutN)
	be, beURL, err := startListening(*echoBin, []string{"-tools", "0"}, nil)
	if err != nil {
		return fmt.Errorf("echoserver: %w", err)
	}
	defer be.stop()
	vm, vmURL, err := startVMCP(tmp, beURL, "sessions:\n  max: 30000\n")
	if err != nil {
		return fmt.Errorf("vmcp: %w", err)
	}
	defer vm.stop()
	direct, err := mcp.NewClient(&mcp.Implementation{Name: "bench-touch", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: beURL}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		return err
	}
	defer direct.Close()
	// the backend alone: 2×N Legacy sessions on it (it has no listen streams)
	d, err := fanoutRounds(direct, [][2]string{{beURL, legacyVersion}, {beURL, legacyVersion}})
	if err != nil {
		return fmt.Errorf("direct: %w", err)
	}
	v, err := fanoutRounds(direct, [][2]string{{vmURL, legacyVersion}, {vmURL, ""}})
	if err != nil {
		return fmt.Errorf("via vmcp: %w", err)
	}
	fmt.Printf("%-34s %-22s %10s %10s %8s %s\n", "row", "metric", "direct", "via vmcp", "ratio", "target")
	name := fmt.Sprintf("fan-out to %d+%d listeners", *fanoutN, *fanoutN)
	line := func(metric string, i int, target string) {
		fmt.Printf("%-34s %-22s %10s %10s %8s %s\n", name, metric, fmtDur(d[i]), fmtDur(v[i]), fmtRatio(float64(v[i])/float64(d[i])), target)
	}
	line("p50 delivery", 0, "")
	line("p99 delivery", 1, verdict(v[1] <= targetFanoutP99, "≤ %s", targetFanoutP99))
	line("last delivery", 2, "")
	return nil
}

// fanoutRounds opens N listeners on each (url, version) of groups, then
// runs -rounds rounds (after one to warm up) of touch through direct and
// returns the medians of p50, p99 and the last delivery.
func fanoutRounds(direct *mcp.ClientSession, groups [][2]string) ([3]time.Duration, error) {
	var out [3]time.Duration
	var a arrivals
	for _, g := range groups {
		ss, tr, err := openListeners(g[0], g[1], *fanoutN, &a)
		if err != nil {
			return out, err
		}
		defer closeIdle(ss, tr)
	}
	want := len(groups) * *fanoutN
	var p50s, p99s, lasts []time.Duration
	for i := range *rounds + 1 {
		a.reset(want)
		if _, err := direct.CallTool(ctx, &mcp.CallToolParams{Name: "touch", Arguments: map[string]any{}}); err != nil {
			return out, fmt.Errorf("touch: %w", err)
		}
		select {
		case <-a.done:
		case <-time.After(20 * time.Second):
			return out, fmt.Errorf("round %d: not every one of %d clients got tools/list_changed within 20s", i, want)
		}
		a.mu.Lock()
		ds := slices.Sorted(slices.Values(a.got))
		a.mu.Unlock()
		if i > 0 {
			p50s, p99s, lasts = append(p50s, quantile(ds, 0.5)), append(p99s, quantile(ds, 0.99)), append(lasts, ds[len(ds)-1])
		}
	}
	med := func(v []time.Duration) time.Duration { slices.Sort(v); return v[len(v)/2] }
	return [3]time.Duration{med(p50s), med(p99s), med(lasts)}, nil
}
