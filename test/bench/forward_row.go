package main

import (
	"fmt"
	"net/url"
	"os/exec"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/test/internal/redisstat"
)

// The forward row: what forwarding costs a call. Two vmcp nodes, A and B,
// on one private redis-server; Legacy sessions are initialized on A, then
// called either on A directly or on B, which forwards each request to the
// owner A, and (the floor of any extra hop) through a plain reverse proxy
// in front of A (test/bench/plainproxy; -plainproxy none skips it). Per
// round (medians over -rounds): c=1 p50 and c=-conc throughput, the
// targets interleaved.

// targetForwardAdds is the forward row's target: what forwarding adds to a
// c=1 call's p50.
const targetForwardAdds = 300 * time.Microsecond

// runForward runs the forward row.
func runForward(tmp string) error {
	fmt.Printf("\n== forwarded Legacy calls: sessions created on node A, called on A, on node B (which forwards to A) or through a plain proxy to A\n")
	if _, err := exec.LookPath("redis-server"); err != nil {
		fmt.Println("skipped: redis-server is not on PATH (make redis installs it)")
		return nil
	}
	rs, err := redisstat.Start()
	if err != nil {
		return err
	}
	defer rs.Stop()
	be, beURL, err := startListening(*echoBin, []string{"-tools", "0"}, nil)
	if err != nil {
		return fmt.Errorf("echoserver: %w", err)
	}
	defer be.stop()
	a, aURL, err := startVMCP(tmp, beURL, clusterYAML("redis_url: "+rs.URL(), "bench-a"))
	if err != nil {
		return fmt.Errorf("vmcp A: %w", err)
	}
	defer a.stop()
	b, bURL, err := startVMCP(tmp, beURL, clusterYAML("redis_url: "+rs.URL(), "bench-b"))
	if err != nil {
		return fmt.Errorf("vmcp B: %w", err)
	}
	defer b.stop()
	hops := map[string]string{"on A": "", "on B → A": bURL}
	if *plainBin != "none" { // the floor: one more HTTP hop, no lookup
		pp, ppURL, err := startListening(*plainBin, []string{"-backend", aURL}, nil)
		if err != nil {
			return fmt.Errorf("plainproxy: %w", err)
		}
		defer pp.stop()
		hops["proxy → A"] = ppURL
	}
	ts, err := forwardTargets(aURL, bURL, hops)
	for _, t := range ts {
		defer t.close()
	}
	if err != nil {
		return fmt.Errorf("%w (A stderr: %s; B stderr: %s)", err, a.stderr, b.stderr)
	}
	return forwardRounds(ts)
}

// forwardNames are the forward row's targets in order (the first is the
// reference; those not started are skipped).
var forwardNames = []string{"on A", "on B → A", "proxy → A"}

// forwardTargets opens, for each target named in hops, 1+conc sessions
// on A whose later requests go to that target's URL ("": A itself), and
// checks that B owns none of them.
func forwardTargets(aURL, bURL string, hops map[string]string) ([]*target, error) {
	var ts []*target
	for _, name := range forwardNames {
		hop, ok := hops[name]
		if !ok {
			continue
		}
		to := ""
		if hop != "" {
			u, err := url.Parse(hop)
			if err != nil {
				return ts, err
			}
			to = u.Host
		}
		ss, _, err := openSessions(aURL, 1+*conc, newRouteTransport(to))
		if err != nil {
			return ts, fmt.Errorf("%s: %w", name, err)
		}
		t := &target{name: name, one: ss[0], many: ss[1:]}
		ts = append(ts, t)
		for range 20 { // warm connections and the caches of either node
			if _, err := t.one.CallTool(ctx, callParams); err != nil {
				return ts, fmt.Errorf("%s: %w", name, err)
			}
		}
	}
	if owned, err := ownedSessions(bURL); err != nil || owned != 0 {
		return ts, fmt.Errorf("node B owns %d sessions (err %v), want 0: calls on B would not be forwarded", owned, err)
	}
	return ts, nil
}

// c1Slice calls tools/call back to back on cs for d and returns each
// call's latency.
func c1Slice(cs *mcp.ClientSession, d time.Duration) ([]time.Duration, error) {
	var lat []time.Duration
	for now, end := time.Now(), time.Now().Add(d); now.Before(end); {
		if _, err := cs.CallTool(ctx, callParams); err != nil {
			return nil, err
		}
		t := time.Now()
		lat, now = append(lat, t.Sub(now)), t
	}
	return lat, nil
}

// forwardRounds measures ts in -rounds rounds, interleaved (each target
// first in turn), and prints the medians.
func forwardRounds(ts []*target) error {
	p50 := make([][]time.Duration, len(ts))
	rps := make([][]float64, len(ts))
	order := func(k int) []int {
		o := make([]int, len(ts))
		for i := range o {
			o[i] = (i + k) % len(ts)
		}
		return o
	}
	for range *rounds {
		lat := make([][]time.Duration, len(ts))
		for k := 0; k < max(1, int(*dur1/slice1)); k++ {
			for _, j := range order(k) {
				l, err := c1Slice(ts[j].one, min(slice1, *dur1))
				if err != nil {
					return fmt.Errorf("c=1 %s: %w", ts[j].name, err)
				}
				lat[j] = append(lat[j], l...)
			}
		}
		nN := make([]int64, len(ts))
		for k := 0; k < max(1, int(*durN/sliceN)); k++ {
			for _, j := range order(k) {
				n, _, err := ts[j].concurrent(min(sliceN, *durN))
				if err != nil {
					return fmt.Errorf("c=%d %s: %w", *conc, ts[j].name, err)
				}
				nN[j] += n
			}
		}
		for j := range ts {
			slices.Sort(lat[j])
			p50[j] = append(p50[j], lat[j][len(lat[j])/2])
			rps[j] = append(rps[j], float64(nN[j])/(float64(max(1, int(*durN/sliceN)))*min(sliceN, *durN).Seconds()))
		}
	}
	printForward(ts, p50, rps)
	return nil
}

// printForward prints the forward row: per target the median p50 and
// c=N throughput, and what it adds to (ratio over) the first, "on A"; the
// forwarded target has the target.
func printForward(ts []*target, p50 [][]time.Duration, rps [][]float64) {
	name := "forward, 2 nodes"
	fmt.Printf("%-26s %-10s %-22s %10s %8s %10s %s\n", "row", "calls", "metric", "value", "ratio", "adds", "target")
	a, ra := medDur(p50[0]), medF(rps[0])
	for j, t := range ts {
		adds := make([]time.Duration, len(p50[j])) // per round: the same round's difference
		for i := range adds {
			adds[i] = p50[j][i] - p50[0][i]
		}
		v, add, target := medDur(p50[j]), medDur(adds), ""
		if t.name == "on B → A" {
			target = verdict(add <= targetForwardAdds, "forwarded adds ≤ %.1f ms", float64(targetForwardAdds)/1e6)
		}
		addS := ""
		if j > 0 {
			addS = fmt.Sprintf("%.3fms", float64(add)/1e6)
		}
		fmt.Printf("%-26s %-10s %-22s %10s %8s %10s %s\n", name, t.name, "c=1 p50 latency", fmtDur(v), fmtRatio(float64(v)/float64(a)), addS, target)
		r := medF(rps[j])
		fmt.Printf("%-26s %-10s %-22s %10.0f %8s %10s\n", name, t.name, fmt.Sprintf("c=%d throughput req/s", *conc), r, fmtRatio(r/ra), "")
	}
}

func medDur(v []time.Duration) time.Duration { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
func medF(v []float64) float64               { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
