package main

import (
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmcp/vmcp/pkg/cluster"
	"github.com/vmcp/vmcp/test/internal/redisstat"
)

// aliveSince is the session-seconds from each of at until end.
func aliveSince(at []time.Time, end time.Time) float64 {
	var s float64
	for _, t := range at {
		s += end.Sub(t).Seconds()
	}
	return s
}

// aliveUntil is the session-seconds from start until each of at.
func aliveUntil(start time.Time, at []time.Time) float64 {
	var s float64
	for _, t := range at {
		if !t.IsZero() {
			s += t.Sub(start).Seconds()
		}
	}
	return s
}

// waitKeys waits up to wait for Redis to hold no more than want keys and
// returns how many more it holds.
func waitKeys(rdb *redis.Client, want int64, wait time.Duration) int64 {
	for deadline := time.Now().Add(wait); ; time.Sleep(50 * time.Millisecond) {
		s, err := redisstat.Read(ctx, rdb)
		if err == nil && (s.Keys <= want || time.Now().After(deadline)) {
			return s.Keys - want
		}
		if err != nil && time.Now().After(deadline) {
			return -1
		}
	}
}

// printRedis prints the redis row: per session, each phase's commands
// less the node's baseline and the idle sessions' rate (raw beside), with
// the commands behind them.
func printRedis(p redisPhases, n int) {
	baseRate := float64(p.base.d.Commands()) / p.base.dur.Seconds()
	idleRate := (float64(p.idle.d.Commands()) - baseRate*p.idle.dur.Seconds()) / p.idle.alive // per session-second
	net := func(ph phase) float64 {
		return (float64(ph.d.Commands()) - baseRate*ph.dur.Seconds() - idleRate*ph.alive) / float64(n)
	}
	name := fmt.Sprintf("redis, %d sessions", n)
	fmt.Printf("%-26s %-34s %9s %9s %9s  %s\n", "row", "metric", "value", "raw", "scripts", "executed commands per unit (raw)")
	line := func(metric string, v float64, ph phase, per float64) {
		fmt.Printf("%-26s %-34s %9.2f %9.2f %9.2f  %s\n", name, metric, v, float64(ph.d.Commands())/per, float64(ph.d.Scripts())/per, ph.d.Breakdown(per))
	}
	line("commands/session start", net(p.start), p.start, float64(n))
	perMin := float64(n) * p.idle.dur.Minutes()
	line("commands/idle session-minute", idleRate*60, p.idle, perMin)
	calls := float64(n * *redisCalls)
	line("commands/tools/call", net(p.call)*float64(n)/calls, p.call, calls)
	line("commands/DELETE", net(p.del), p.del, float64(n))
	fmt.Printf("%-26s %-34s %9.2f\n", name, "keys/session", float64(p.start.d.Keys)/float64(n))
	fmt.Printf("%-26s %-34s %9.0f\n", name, "Redis bytes/session (used_memory)", float64(p.start.d.UsedMemory)/float64(n))
	fmt.Printf("%-26s %-34s %9d\n", name, "keys left after every DELETE", p.keysLeft)
	fmt.Printf("%-26s %-34s %9.2f %9s %9s  %s\n", name, "node alone: commands/s", baseRate, "", "", p.base.d.Breakdown(p.base.dur.Seconds()))
	t := cluster.DefaultTiming
	fmt.Printf("(phases: start %s, idle %s, calls %s, DELETEs %s; timing: heartbeat %s, session TTL %s, stream TTL %s: an idle window shorter than a refresh period miscounts)\n",
		p.start.dur.Round(time.Millisecond), p.idle.dur.Round(time.Millisecond), p.call.dur.Round(time.Millisecond), p.del.dur.Round(time.Millisecond),
		t.Heartbeat, t.SessionTTL, t.StreamTTL)
}
