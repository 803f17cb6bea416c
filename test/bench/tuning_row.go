package main

import (
	"flag"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
)

// The tuning row (issue 28): is each piece of tuning machinery still worth
// its code? Each piece is switched off in one vmcp (VMCP_TUNING_OFF for the
// GC tuner, its GOGC half alone, and bulk phases; a build tag for the JSON
// scanner and map shrinking, whose code paths are constants) and
// measured against the vmcp with everything on, on the rows the piece is
// meant to help, in -rounds alternating rounds (the order rotates each
// round, so the machine's background load falls on both sides):
//
//   - calls (Legacy and Modern rows, interleaved slices like the call rows,
//     with direct and the plain proxy): c=N throughput, vmcp CPU and KB
//     allocated per call, peak RSS (per round: VmHWM, reset after each)
//   - idle: -tuning-idle idle Legacy sessions opened on a fresh vmcp, RSS
//     per session; then closed: RSS and heap after a forced GC once idle
//   - age: -tuning-age calls by four Legacy sessions to a stdio backend
//     (the go-sdk connection path): heap after GC, peak RSS, CPU per call
//   - walk: a fresh vmcp listing 2 × -walk-tools tools: peak RSS and CPU
//     at start, until a client's first full walk
//   - progress: one call with -progress-count notifications, Legacy and
//     Modern clients: time and peak RSS
//
// Ratios are medians of each round's off ÷ on.
var (
	tuningIdle  = flag.Int("tuning-idle", 5000, "tuning row: idle Legacy sessions opened and closed per measurement")
	tuningAge   = flag.Int("tuning-age", 10000, "tuning row: calls of the age measurement")
	tuningParts = flag.String("tuning-parts", "calls,idle,age,walk,progress", "tuning row: the measurements to run")
	tuningOff   = flag.String("tuning-off", "gctuner,bulkgc,scanner,shrink", "tuning row: the pieces to switch off, one vmcp each (also gogc: the GC tuner only hands memory back, GOGC stays 100)")
)

// variant is one vmcp measured by the tuning row: everything on, or one
// piece off (by environment or by a binary built with a tag).
type variant struct {
	name string // "on" or the piece switched off
	bin  string
	env  string // comma separated, after -vmcp-env
}

// tuningVariants builds the tag binaries into tmp and returns the variants:
// on first.
func tuningVariants(tmp string) ([]variant, error) {
	vs := []variant{{"on", *vmcpBin, *vmcpEnv}}
	for _, p := range []string{"gctuner", "gogc", "bulkgc"} {
		vs = append(vs, variant{p, *vmcpBin, strings.Trim(*vmcpEnv+",VMCP_TUNING_OFF="+p, ",")})
	}
	for _, p := range []struct{ name, tag string }{{"scanner", "vmcp_noscan"}, {"shrink", "vmcp_noshrink"}} {
		if !slices.Contains(strings.Split(*tuningOff, ","), p.name) {
			continue
		}
		bin := filepath.Join(tmp, "vmcp-"+p.tag)
		if out, err := exec.Command("go", "build", "-tags", p.tag, "-o", bin, "./cmd/vmcp").CombinedOutput(); err != nil {
			return nil, fmt.Errorf("building vmcp -tags %s: %w: %s", p.tag, err, out)
		}
		vs = append(vs, variant{p.name, bin, *vmcpEnv})
	}
	return vs, nil
}

// pick returns the variants named and in -tuning-off (on always first).
func pick(vs []variant, names ...string) []variant {
	out := []variant{vs[0]}
	wanted := strings.Split(*tuningOff, ",")
	for _, v := range vs[1:] {
		for _, n := range names {
			if v.name == n && slices.Contains(wanted, n) {
				out = append(out, v)
			}
		}
	}
	return out
}

// with runs f with vmcp started as v (startVMCPConfig reads the flags).
func (v variant) with(f func() error) error {
	bin, env := *vmcpBin, *vmcpEnv
	*vmcpBin, *vmcpEnv = v.bin, v.env
	defer func() { *vmcpBin, *vmcpEnv = bin, env }()
	return f()
}

// tally holds the row's readings: per metric, per variant, one per round.
type tally struct {
	order []string // metrics in the order first seen
	piece map[string]string
	vals  map[string]map[string][]float64
}

func newTally() *tally {
	return &tally{piece: map[string]string{}, vals: map[string]map[string][]float64{}}
}

// add records variant's reading of metric (for the pieces named) in this
// round.
func (t *tally) add(metric, pieces, variant string, v float64) {
	if t.vals[metric] == nil {
		t.vals[metric] = map[string][]float64{}
		t.order = append(t.order, metric)
		t.piece[metric] = pieces
	}
	t.vals[metric][variant] = append(t.vals[metric][variant], v)
}

// runTuning runs the tuning row.
func runTuning(tmp string) error {
	fmt.Printf("\n== tuning machinery, each piece off ÷ on (medians of %d alternating rounds; load average %s)\n", *rounds, loadavg())
	vs, err := tuningVariants(tmp)
	if err != nil {
		return err
	}
	t := newTally()
	parts := map[string]func(string, []variant, *tally) error{
		"calls": tuneCalls, "idle": tuneIdle, "age": tuneAge, "walk": tuneWalk, "progress": tuneProgress,
	}
	for _, p := range strings.Split(*tuningParts, ",") {
		f := parts[strings.TrimSpace(p)]
		if f == nil {
			return fmt.Errorf("-tuning-parts: unknown part %q", p)
		}
		if err := f(tmp, vs, t); err != nil {
			return fmt.Errorf("tuning, %s: %w", p, err)
		}
	}
	t.print()
	fmt.Printf("load average after: %s\n", loadavg())
	return nil
}

// print prints, per metric and piece off, the medians on and off, the
// median of the rounds' off ÷ on, and on and off to direct and the plain
// proxy where the metric has them.
func (t *tally) print() {
	fmt.Printf("%-40s %-9s %10s %10s %8s %13s %9s %9s %9s %9s\n", "metric", "off", "on", "off", "off÷on", "rounds' range", "on÷dir", "off÷dir", "on÷proxy", "off÷proxy")
	for _, m := range t.order {
		vals := t.vals[m]
		on := vals["on"]
		for _, name := range strings.Split(t.piece[m], ",") {
			off := vals[name]
			if len(off) == 0 || len(off) != len(on) {
				continue
			}
			rs := make([]float64, len(on))
			for i := range on {
				rs[i] = off[i] / on[i]
			}
			fmt.Printf("%-40s %-9s %10.4g %10.4g %7.3f× %6.2f–%5.2f× %9s %9s %9s %9s\n", m, name, med(on), med(off), med(rs), slices.Min(rs), slices.Max(rs),
				rel(on, vals["direct"]), rel(off, vals["direct"]), rel(on, vals["proxy"]), rel(off, vals["proxy"]))
		}
	}
	fmt.Println("rounds' range: the lowest and highest round's off ÷ on; on÷dir, on÷proxy: medians of each round's ratio to the backend called directly and to the plain proxy (call rows only).")
}

// rel is the median of a[i]/b[i] as a ratio ("" without b).
func rel(a, b []float64) string {
	if len(b) != len(a) || len(a) == 0 {
		return ""
	}
	rs := make([]float64, len(a))
	for i := range a {
		rs[i] = a[i] / b[i]
	}
	return fmtRatio(med(rs))
}

func med(xs []float64) float64 { return medianBy(xs, func(x float64) float64 { return x }) }
