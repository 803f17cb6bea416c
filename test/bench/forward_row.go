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
// owner A. Per round (medians over -rounds): c=1 p50, interleaved, and
// c=-conc throughput, interleaved.

// targetForwardAdds is the forward row's target: what forwarding adds to a
// c=1 call's p50.
const targetForwardAdds = 300 * time.Microsecond

// runForward runs the forward row.
func runForward(tmp string) error {
	fmt.Printf("\n== forwarded Legacy calls: sessions created on node A, called on A or on node B (which forwards to A)\n")
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
	a, aURL, err := startVMCP(tmp, beURL, clusterYAML(rs.URL(), "bench-a"))
	if err != nil {
		return fmt.Errorf("vmcp A: %w", err)
	}
	defer a.stop()
	b, bURL, err := startVMCP(tmp, beURL, clusterYAML(rs.URL(), "bench-b"))
	if err != nil {
		return fmt.Errorf("vmcp B: %w", err)
	}
	defer b.stop()
	direct, via, err := forwardTargets(aURL, bURL)
	if err != nil {
		return fmt.Errorf("%w (A stderr: %s; B stderr: %s)", err, a.stderr, b.stderr)
	}
	defer direct.close()
	defer via.close()
	return forwardRounds(direct, via)
}

// forwardTargets opens 1+conc sessions on A for calls on A, and as many
// on A for calls on B, and checks that B owns none of them.
func forwardTargets(aURL, bURL string) (direct, via *target, err error) {
	bu, err := url.Parse(bURL)
	if err != nil {
		return nil, nil, err
	}
	direct, via = &target{name: "on A"}, &target{name: "on B"}
	for _, t := range []*target{direct, via} {
		to := ""
		if t == via {
			to = bu.Host
		}
		ss, _, err := openSessions(aURL, 1+*conc, newRouteTransport(to))
		if err != nil {
			return nil, nil, fmt.Errorf("%s: %w", t.name, err)
		}
		t.one, t.many = ss[0], ss[1:]
		for range 20 { // warm connections and the caches of either node
			if _, err := t.one.CallTool(ctx, callParams); err != nil {
				return nil, nil, fmt.Errorf("%s: %w", t.name, err)
			}
		}
	}
	if owned, err := ownedSessions(bURL); err != nil || owned != 0 {
		return nil, nil, fmt.Errorf("node B owns %d sessions (err %v), want 0: calls on B would not be forwarded", owned, err)
	}
	return direct, via, nil
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

// forwardRounds measures direct (on A) and via (on B) in -rounds
// interleaved rounds and prints the medians.
func forwardRounds(direct, via *target) error {
	ts := []*target{direct, via}
	var p50 [2][]time.Duration
	var rps [2][]float64
	var adds []time.Duration
	for range *rounds {
		var lat [2][]time.Duration
		for k := 0; k < max(1, int(*dur1/slice1)); k++ {
			for _, j := range []int{k % 2, (k + 1) % 2} {
				l, err := c1Slice(ts[j].one, min(slice1, *dur1))
				if err != nil {
					return fmt.Errorf("c=1 %s: %w", ts[j].name, err)
				}
				lat[j] = append(lat[j], l...)
			}
		}
		var nN [2]int64
		var tN [2]time.Duration
		for k := 0; k < max(1, int(*durN/sliceN)); k++ {
			for _, j := range []int{k % 2, (k + 1) % 2} {
				n, _, err := ts[j].concurrent(min(sliceN, *durN))
				if err != nil {
					return fmt.Errorf("c=%d %s: %w", *conc, ts[j].name, err)
				}
				nN[j], tN[j] = nN[j]+n, tN[j]+min(sliceN, *durN)
			}
		}
		for j := range 2 {
			slices.Sort(lat[j])
			p50[j] = append(p50[j], lat[j][len(lat[j])/2])
			rps[j] = append(rps[j], float64(nN[j])/tN[j].Seconds())
		}
		adds = append(adds, p50[1][len(p50[1])-1]-p50[0][len(p50[0])-1])
	}
	printForward(p50, rps, adds)
	return nil
}

// printForward prints the forward row from the rounds' figures.
func printForward(p50 [2][]time.Duration, rps [2][]float64, adds []time.Duration) {
	medD := func(v []time.Duration) time.Duration { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	medF := func(v []float64) float64 { v = slices.Clone(v); slices.Sort(v); return v[len(v)/2] }
	name := "forward, 2 nodes"
	fmt.Printf("%-26s %-22s %10s %10s %8s %10s %s\n", "row", "metric", "on A", "on B → A", "ratio", "B − A", "target")
	a, b, add := medD(p50[0]), medD(p50[1]), medD(adds)
	fmt.Printf("%-26s %-22s %10s %10s %8s %10s %s\n", name, "c=1 p50 latency", fmtDur(a), fmtDur(b), fmtRatio(float64(b)/float64(a)),
		fmt.Sprintf("%.3fms", float64(add)/1e6), verdict(add <= targetForwardAdds, "forwarded adds ≤ %.1f ms", float64(targetForwardAdds)/1e6))
	ra, rb := medF(rps[0]), medF(rps[1])
	fmt.Printf("%-26s %-22s %10.0f %10.0f %8s %10s %s\n", name, fmt.Sprintf("c=%d throughput req/s", *conc), ra, rb, fmtRatio(rb/ra), "", "")
}
