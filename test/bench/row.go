package main

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// runRow starts the row's backend and vmcp, connects the clients and runs
// the alternating rounds.
func runRow(tmp string, r row) (direct, via result, q ratios, err error) {
	fmt.Printf("\n== %s\n", r.name)
	be, beURL, err := startListening(*echoBin, echoArgs(r), nil)
	if err != nil {
		return direct, via, q, fmt.Errorf("echoserver: %w", err)
	}
	defer be.stop()
	vm, vmURL, err := startVMCP(tmp, beURL, "")
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
		{name: "vmcp", url: vmURL, vmcp: vm, hop: vm},
	}
	targets, stopAudit, err := withAudit(tmp, beURL, targets) // -audit: a second vmcp, with the audit log (audit_row.go)
	if err != nil {
		return direct, via, q, err
	}
	defer stopAudit()
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
		targets = append(targets, &target{name: "proxy", url: ppURL, hop: pp})
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
	res, err := runRounds(targets, r)
	if err != nil {
		return direct, via, q, err
	}
	direct, via, q = summarize(res)
	via.rssMiB = vm.peakRSS()
	return direct, via, q, nil
}

// echoArgs are the echoserver's arguments for row r.
func echoArgs(r row) []string {
	args := []string{"-tools", strconv.Itoa(*nTools), "-page-size", strconv.Itoa(*pageSize)}
	if r.stateless {
		args = append(args, "-stateless")
	}
	return args
}

// runRounds runs -rounds rounds and returns each target's results by name.
func runRounds(targets []*target, r row) (map[string][]result, error) {
	res := map[string][]result{}
	for i := range *rounds {
		ms, err := round(targets, i == 0 && *profileDir != "", r)
		if err != nil {
			return nil, fmt.Errorf("round %d: %w", i+1, err)
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
	printAudit(r.name, res) // with -audit (audit_row.go)
	return res, nil
}

// summarize is the medians of direct's and vmcp's results and of each
// round's ratios to direct (vmcp's, and the plain proxy's as q.floor).
func summarize(res map[string][]result) (direct, via result, q ratios) {
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
	if p := res["proxy"]; len(p) > 0 {
		via.floorCPUUS = median(p).cpuUS
	}
	floor := q.floor
	q = q.median()
	if floor != nil {
		m := floor.median()
		q.floor = &m
	}
	return median(res["direct"]), via, q
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
	med := func(f func(ratios) float64) float64 { return medianBy(q.all, f) }
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
	pick := func(f func(result) float64) float64 { return medianBy(rs, f) }
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

// medianBy is the median of f over xs (the upper one of an even count).
func medianBy[T any](xs []T, f func(T) float64) float64 {
	v := make([]float64, len(xs))
	for i, x := range xs {
		v[i] = f(x)
	}
	slices.Sort(v)
	return v[len(v)/2]
}
