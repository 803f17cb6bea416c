package main

import (
	"fmt"
	"slices"
	"time"

	"github.com/vmcp/vmcp/pkg/cluster"
)

// batchFigures summarises batches of one operation over n sessions in
// all: the median batch's commands per operation (and that batch and its
// size), the mean over every batch, and how many batches are above the
// median by more than half of it (they contain a refresh round).
func batchFigures(bs []phase, n int) (median float64, med phase, size int, mean float64, above int) {
	per := func(i int) float64 { return float64(bs[i].d.Commands()) / float64(batchSize(i, n)) }
	idx := make([]int, len(bs))
	var total int64
	for i := range bs {
		idx[i] = i
		total += bs[i].d.Commands()
	}
	slices.SortFunc(idx, func(a, b int) int {
		switch pa, pb := per(a), per(b); {
		case pa < pb:
			return -1
		case pa > pb:
			return 1
		}
		return 0
	})
	m := idx[len(idx)/2]
	median, med, size = per(m), bs[m], batchSize(m, n)
	for i := range bs {
		if per(i) > 1.5*median+0.5 {
			above++
		}
	}
	return median, med, size, float64(total) / float64(n), above
}

// batchSize is the size of batch i of n sessions.
func batchSize(i, n int) int { return min(*conc, n-i**conc) }

// printRedis prints the redis row: per session, the median batch's
// commands (mean over every batch beside), the idle rate less the node's
// own commands, keys and bytes.
// label names the row ("redis", "redis cluster"); counted says whether
// requests were counted (not on a Redis Cluster: "-").
func printRedis(p redisPhases, label string, n int, counted bool) {
	name := fmt.Sprintf("%s, %d sessions", label, n)
	req := func(v float64) string {
		if !counted {
			return "-"
		}
		return fmt.Sprintf("%.2f", v)
	}
	fmt.Printf("%-30s %-34s %9s %9s %9s  %s\n", "row", "metric", "executed", "mean", "requests", "executed commands per unit (median batch; idle: window)")
	for _, r := range []struct {
		metric string
		bs     []phase
	}{{"commands/session start", p.start}, {"commands/tools/call", p.call}, {"commands/DELETE", p.del}} {
		v, med, size, mean, above := batchFigures(r.bs, n)
		per := float64(size)
		var took time.Duration
		for _, b := range r.bs {
			took += b.dur
		}
		fmt.Printf("%-30s %-34s %9.2f %9.2f %9s  %s (%d of %d batches with a refresh; %s)\n", name, r.metric, v, mean, req(float64(med.req)/per),
			med.d.Breakdown(per), above, len(r.bs), took.Round(10*time.Millisecond))
	}
	baseRate := float64(p.base.d.Commands()) / p.base.dur.Seconds()
	perMin := float64(n) * p.idle.dur.Minutes()
	idle := (float64(p.idle.d.Commands()) - baseRate*p.idle.dur.Seconds()) / perMin
	idleReq := (float64(p.idle.req) - float64(p.base.req)*p.idle.dur.Seconds()/p.base.dur.Seconds()) / perMin
	fmt.Printf("%-30s %-34s %9.2f %9.2f %9s  %s\n", name, "commands/idle session-minute", idle, float64(p.idle.d.Commands())/perMin,
		req(idleReq), p.idle.d.Breakdown(perMin))
	fmt.Printf("%-30s %-34s %9.2f\n", name, "keys/session", float64(p.keys)/float64(n))
	fmt.Printf("%-30s %-34s %9.0f\n", name, "Redis bytes/session (used_memory)", float64(p.bytes)/float64(n))
	fmt.Printf("%-30s %-34s %9d\n", name, "keys left after every DELETE", p.keysLeft)
	fmt.Printf("%-30s %-34s %9d  (of %d; a key still there 5 s after its batch's DELETEs answered)\n", name, "DELETE batches with keys left", p.lagging, len(p.del))
	fmt.Printf("%-30s %-34s %9.2f %9s %9s  %s\n", name, "node alone: commands/s", baseRate, "", req(float64(p.base.req)/p.base.dur.Seconds()), p.base.d.Breakdown(p.base.dur.Seconds()))
	t := cluster.DefaultTiming()
	longest := max(t.Heartbeat, t.SessionTTL/3)
	fmt.Printf("(idle window %s; refresh periods: heartbeat %s, session records SessionTTL/3 %s)\n",
		p.idle.dur.Round(time.Millisecond), t.Heartbeat, (t.SessionTTL / 3).Round(time.Millisecond))
	if p.idle.dur < 3*longest {
		fmt.Printf("warning: the idle window is shorter than 3 refresh periods of %s: the idle figure may miss or double a refresh round (pass -redis-idle %s or more)\n",
			longest.Round(time.Millisecond), (3 * longest).Round(time.Second))
	}
}
