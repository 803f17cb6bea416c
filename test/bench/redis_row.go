package main

import (
	"flag"
	"fmt"
	"os/exec"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmcp/vmcp/test/internal/redisstat"
)

// The redis row: what Legacy sessions cost the cluster's Redis. One vmcp
// node on a private redis-server; -redis-sessions Legacy sessions (GET
// streams open) start, stay idle for -redis-idle, make one tools/call each
// and end (DELETE). Counts are deltas of INFO commandstats (INFO excluded;
// commands a script runs count beside its EVALSHA); requests are what
// vmcp sent, counted by a proxy in front of Redis (redisstat.Counter).
//
// The node refreshes every open session's records every few seconds: a
// phase that contains a refresh round counts it too. So start, call and
// DELETE are measured in batches of -conc sessions, each between its own
// two readings, and the median batch is reported (most batches contain
// no refresh; "mean" keeps them). The idle rate is one window, less the
// node's own commands with no session (measured first, for -redis-base).
var (
	redisN    = flag.Int("redis-sessions", 1000, "Legacy sessions of the redis row")
	redisIdle = flag.Duration("redis-idle", 90*time.Second, "idle window of the redis row (the rate is scaled to a minute); make it a multiple of the refresh periods")
	redisBase = flag.Duration("redis-base", 10*time.Second, "window of the redis row's no-session baseline")
)

// meter reads the private Redis: rdb directly (INFO: executed commands),
// ctr in front of it, which vmcp talks through (requests sent).
type meter struct {
	rdb *redis.Client
	ctr *redisstat.Counter
}

// phase is one measured window: the Redis delta, the requests sent and
// its duration.
type phase struct {
	d   redisstat.Stats
	req int64
	dur time.Duration
}

// measure runs f between two readings of m.
func measure(m meter, f func() error) (phase, error) {
	s0, err := redisstat.Read(ctx, m.rdb)
	if err != nil {
		return phase{}, err
	}
	r0, t0 := m.ctr.Requests(), time.Now()
	if err := f(); err != nil {
		return phase{}, err
	}
	dur, r1 := time.Since(t0), m.ctr.Requests()
	s1, err := redisstat.Read(ctx, m.rdb)
	return phase{s1.Sub(s0), r1 - r0, dur}, err
}

// batched measures f(lo, hi) for each batch [lo, hi) of n sessions,
// -conc at a time.
func batched(m meter, n int, f func(lo, hi int) error) ([]phase, error) {
	var out []phase
	for lo := 0; lo < n; lo += *conc {
		hi := min(n, lo+*conc)
		p, err := measure(m, func() error { return f(lo, hi) })
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, nil
}

// redisPhases are the redis row's measurements.
type redisPhases struct {
	base, idle       phase
	start, call, del []phase
	keys, bytes      int64 // held by the n open sessions
	keysLeft         int64 // keys beyond the no-session count after every DELETE
	lagging          int   // DELETE batches whose keys were not all gone 5 s later
}

// runRedis runs the redis row.
func runRedis(tmp string) error {
	n := *redisN
	fmt.Printf("\n== Redis cost of %d Legacy sessions on one node (GET streams open; private redis-server)\n", n)
	if _, err := exec.LookPath("redis-server"); err != nil {
		fmt.Println("skipped: redis-server is not on PATH (make redis installs it)")
		return nil
	}
	rs, err := redisstat.Start()
	if err != nil {
		return err
	}
	defer rs.Stop()
	rdb := rs.Client()
	defer rdb.Close()
	ctr, err := redisstat.NewCounter(rs.Addr)
	if err != nil {
		return err
	}
	defer ctr.Close()
	be, beURL, err := startListening(*echoBin, []string{"-tools", "0"}, nil)
	if err != nil {
		return fmt.Errorf("echoserver: %w", err)
	}
	defer be.stop()
	vm, vmURL, err := startVMCP(tmp, beURL, clusterYAML(ctr.URL(), "bench-a"))
	if err != nil {
		return fmt.Errorf("vmcp: %w", err)
	}
	defer vm.stop()
	p, err := redisRun(meter{rdb, ctr}, vmURL, n)
	if err != nil {
		return fmt.Errorf("redis row: %w (vmcp stderr: %s)", err, vm.stderr)
	}
	printRedis(p, n)
	return nil
}
