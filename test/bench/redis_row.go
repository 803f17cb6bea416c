package main

import (
	"flag"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"github.com/vmcp/vmcp/test/internal/redisstat"
)

// The redis row: what Legacy sessions cost the cluster's Redis. One vmcp
// node on a private redis-server; -redis-sessions Legacy sessions (GET
// streams open, -conc opened at a time) start, stay idle for -redis-idle,
// make -redis-calls tools/calls each and end (DELETE). Each phase's commands are the
// delta of INFO commandstats (INFO excluded), less what the node does with
// no session (measured first, for -redis-base) and, for the phases other
// than idle, less the idle sessions' own periodic commands over the time
// each was open in the phase (the idle rate): the "raw" column keeps them.
var (
	redisN     = flag.Int("redis-sessions", 1000, "Legacy sessions of the redis row")
	redisIdle  = flag.Duration("redis-idle", 30*time.Second, "idle window of the redis row (the rate is scaled to a minute)")
	redisBase  = flag.Duration("redis-base", 10*time.Second, "window of the redis row's no-session baseline")
	redisCalls = flag.Int("redis-calls", 3, "tools/calls per session in the redis row's call phase (a longer phase: the idle rate subtracted from it averages out)")
)

// phase is one measured phase: the Redis delta, its duration and the
// session-seconds sessions were open during it.
type phase struct {
	d     redisstat.Stats
	dur   time.Duration
	alive float64
}

// measure runs f between two readings of rdb; f returns the session-seconds.
func measure(rdb *redis.Client, f func() (float64, error)) (phase, error) {
	s0, err := redisstat.Read(ctx, rdb)
	if err != nil {
		return phase{}, err
	}
	t0 := time.Now()
	alive, err := f()
	if err != nil {
		return phase{}, err
	}
	dur := time.Since(t0)
	s1, err := redisstat.Read(ctx, rdb)
	return phase{s1.Sub(s0), dur, alive}, err
}

// redisPhases are the redis row's measurements.
type redisPhases struct {
	base, start, idle, call, del phase
	keysLeft                     int64 // keys beyond the no-session count, 5 s after the last DELETE
}

// runRedis runs the redis row.
func runRedis(tmp string) error {
	n := *redisN
	fmt.Printf("\n== Redis cost of %d Legacy sessions on one node (GET streams open; private redis-server)\n", n)
	rs, err := redisstat.Start()
	if err != nil {
		return err
	}
	defer rs.Stop()
	rdb := rs.Client()
	defer rdb.Close()
	be, beURL, err := startListening(*echoBin, []string{"-tools", "0"}, nil)
	if err != nil {
		return fmt.Errorf("echoserver: %w", err)
	}
	defer be.stop()
	vm, vmURL, err := startVMCP(tmp, beURL, clusterYAML(rs.URL(), "bench-a"))
	if err != nil {
		return fmt.Errorf("vmcp: %w", err)
	}
	defer vm.stop()
	p, err := redisRun(rdb, vmURL, n)
	if err != nil {
		return fmt.Errorf("redis row: %w (vmcp stderr: %s)", err, vm.stderr)
	}
	printRedis(p, n)
	return nil
}

// redisRun measures the phases of n sessions on vmURL.
func redisRun(rdb *redis.Client, vmURL string, n int) (redisPhases, error) {
	var p redisPhases
	time.Sleep(time.Second) // the node's first heartbeat and Redis connections
	s0, err := redisstat.Read(ctx, rdb)
	if err != nil {
		return p, err
	}
	if p.base, err = measure(rdb, func() (float64, error) { time.Sleep(*redisBase); return 0, nil }); err != nil {
		return p, err
	}
	rt := newRouteTransport("")
	defer rt.base.CloseIdleConnections()
	var ss []*mcp.ClientSession
	p.start, err = measure(rdb, func() (float64, error) {
		var at []time.Time
		if ss, at, err = openSessions(vmURL, n, rt); err != nil {
			return 0, err
		}
		if err := rt.waitGETs(int64(n)); err != nil {
			return 0, err
		}
		time.Sleep(200 * time.Millisecond)
		return aliveSince(at, time.Now()), nil
	})
	if err != nil {
		return p, err
	}
	if p.idle, err = measure(rdb, func() (float64, error) { time.Sleep(*redisIdle); return float64(n) * redisIdle.Seconds(), nil }); err != nil {
		return p, err
	}
	p.call, err = measure(rdb, func() (float64, error) {
		t0 := time.Now()
		for range *redisCalls {
			if err := callEach(ss); err != nil {
				return 0, err
			}
		}
		return float64(n) * time.Since(t0).Seconds(), nil
	})
	if err != nil {
		return p, err
	}
	p.del, err = measure(rdb, func() (float64, error) {
		t0 := time.Now()
		at := closeSessions(ss)
		p.keysLeft = waitKeys(rdb, s0.Keys, 5*time.Second)
		return aliveUntil(t0, at), nil
	})
	return p, err
}
