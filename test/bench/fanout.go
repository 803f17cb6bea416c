package main

import (
	"cmp"
	"context"
	"flag"
	"fmt"
	"net/http"
	"runtime"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The fan-out row: how long one backend tools/list_changed takes to reach
// every listening client through vmcp: -fanout Legacy sessions (their GET
// streams) and as many Modern clients (their subscriptions/listen
// streams). Each round the bench calls the backend's touch tool directly
// (it adds a tool) and times each client's tools/list_changed handler
// from the backend's notification: the moment the touching session, the
// backend's first, gets its own. p50, p99 and the last arrival are
// reported (medians over -rounds), and the p99 from just before the touch
// call (which adds the call and the go-sdk's 10 ms notification delay).
//
// The bench's own collector is held off during a round (and run between
// rounds): its 2,000 go-sdk clients each allocate a 32 KiB buffer per
// message read, and collecting that garbage with 4,000 goroutine stacks
// took five times vmcp's CPU and doubled every delay measured (2026-12-02).
var fanoutN = flag.Int("fanout", 1000, "listening clients of each revision in the fan-out row")

// targetFanoutP99 is the fan-out target: p99 from the backend's
// notification to the last client's read.
const targetFanoutP99 = 100 * time.Millisecond

// arrivals collects one round's delivery times.
type arrivals struct {
	mu    sync.Mutex
	t0    time.Time   // just before the touch call
	tN    time.Time   // the touching session got its list_changed
	got   []time.Time // the listeners got theirs
	group []int       // which of fanoutRounds' groups each arrival is of
	want  int
	done  chan struct{}
	extra int // deliveries after the round completed (duplicates)
}

func (a *arrivals) reset(want int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.t0, a.tN, a.got, a.group, a.want, a.done = time.Now(), time.Time{}, a.got[:0], a.group[:0], want, make(chan struct{})
}

// notified records the touching session's own list_changed, once a round.
func (a *arrivals) notified() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.tN.IsZero() {
		a.tN = time.Now()
	}
}

func (a *arrivals) add(group int) {
	now := time.Now()
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.done == nil || len(a.got) >= a.want {
		a.extra++
		return
	}
	a.group = append(a.group, group)
	if a.got = append(a.got, now); len(a.got) == a.want {
		close(a.done)
	}
}

// delays are the round's sorted delivery delays from the backend's
// notification and from the touch call; ok is false when the touching
// session got no list_changed.
func (a *arrivals) delays() (fromNotify, fromCall []time.Duration, ok bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, t := range a.got {
		fromNotify, fromCall = append(fromNotify, max(0, t.Sub(a.tN))), append(fromCall, t.Sub(a.t0))
	}
	slices.Sort(fromNotify)
	slices.Sort(fromCall)
	return fromNotify, fromCall, !a.tN.IsZero()
}

// groupLine is, for -v, the first, p50 and last delivery of each group
// from the backend's notification.
func (a *arrivals) groupLine(groups [][2]string) string {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []string
	for g, gr := range groups {
		var ds []time.Duration
		for i, t := range a.got {
			if a.group[i] == g {
				ds = append(ds, t.Sub(a.tN))
			}
		}
		if slices.Sort(ds); len(ds) > 0 {
			out = append(out, fmt.Sprintf("%s %s: first %s p50 %s last %s", gr[0], cmp.Or(gr[1], "default"),
				fmtDur(ds[0]), fmtDur(quantile(ds, 0.5)), fmtDur(ds[len(ds)-1])))
		}
	}
	return strings.Join(out, "; ")
}

// openListeners opens n sessions at version on url whose
// tools/list_changed handler reports to a.
func openListeners(url, version string, n int, a *arrivals, group int) ([]*mcp.ClientSession, *http.Transport, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	hc := &http.Client{Transport: tr}
	out := make([]*mcp.ClientSession, 0, n)
	for range n {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench-fanout", Version: "1"}, &mcp.ClientOptions{
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { a.add(group) },
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
	// the backend alone: 2×N Legacy sessions on it (it has no listen streams)
	d, err := fanoutRounds(beURL, [][2]string{{beURL, legacyVersion}, {beURL, legacyVersion}})
	if err != nil {
		return fmt.Errorf("direct: %w", err)
	}
	v, err := fanoutRounds(beURL, [][2]string{{vmURL, legacyVersion}, {vmURL, ""}})
	if err != nil {
		return fmt.Errorf("via vmcp: %w", err)
	}
	fmt.Printf("%-34s %-28s %10s %10s %8s %s\n", "row", "metric", "direct", "via vmcp", "ratio", "target")
	name := fmt.Sprintf("fan-out to %d+%d listeners", *fanoutN, *fanoutN)
	line := func(metric string, i int, target string) {
		fmt.Printf("%-34s %-28s %10s %10s %8s %s\n", name, metric, fmtDur(d[i]), fmtDur(v[i]), fmtRatio(float64(v[i])/float64(d[i])), target)
	}
	line("p50 delivery", 0, "")
	line("p99 delivery", 1, verdict(v[1] <= targetFanoutP99, "≤ %s", targetFanoutP99))
	line("last delivery", 2, "")
	line("p99 from the touch call", 3, "")
	return nil
}

// fanoutRounds opens a touching session on beURL, then N listeners on
// each (url, version) of groups, runs -rounds rounds (after one to warm
// up) of touch and returns the medians of p50, p99 and the last delivery
// from the backend's notification, and of the p99 from the touch call.
func fanoutRounds(beURL string, groups [][2]string) ([4]time.Duration, error) {
	var out [4]time.Duration
	var a arrivals
	touch, err := mcp.NewClient(&mcp.Implementation{Name: "bench-touch", Version: "1"}, &mcp.ClientOptions{
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { a.notified() },
	}).Connect(ctx, &mcp.StreamableClientTransport{Endpoint: beURL}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	if err != nil {
		return out, err
	}
	defer touch.Close()
	for gi, g := range groups {
		ss, tr, err := openListeners(g[0], g[1], *fanoutN, &a, gi)
		if err != nil {
			return out, err
		}
		defer closeIdle(ss, tr)
	}
	want := len(groups) * *fanoutN
	var stats [4][]time.Duration
	defer debug.SetGCPercent(debug.SetGCPercent(-1))
	for i := range *rounds + 1 {
		runtime.GC()
		a.reset(want)
		if _, err := touch.CallTool(ctx, &mcp.CallToolParams{Name: "touch", Arguments: map[string]any{}}); err != nil {
			return out, fmt.Errorf("touch: %w", err)
		}
		select {
		case <-a.done:
		case <-time.After(20 * time.Second):
			return out, fmt.Errorf("round %d: not every one of %d clients got tools/list_changed within 20s", i, want)
		}
		ds, dc, ok := a.delays()
		if !ok {
			return out, fmt.Errorf("round %d: the touching session got no tools/list_changed", i)
		}
		if *verbose {
			fmt.Printf("  round %d: %s\n", i, a.groupLine(groups))
		}
		if i > 0 {
			for k, v := range [4]time.Duration{quantile(ds, 0.5), quantile(ds, 0.99), ds[len(ds)-1], quantile(dc, 0.99)} {
				stats[k] = append(stats[k], v)
			}
		}
	}
	for k, v := range stats {
		slices.Sort(v)
		out[k] = v[len(v)/2]
	}
	return out, nil
}
