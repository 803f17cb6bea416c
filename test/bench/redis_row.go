package main

import (
	"flag"
	"fmt"
	"os/exec"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
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

// meter reads the private Redis: each of rdbs directly (INFO: executed
// commands, summed over a Redis Cluster's primaries), ctr in front of it,
// which vmcp talks through (requests sent; nil on a Redis Cluster, whose
// clients dial the addresses the cluster announces: not counted).
type meter struct {
	rdbs []*redis.Client
	ctr  *redisstat.Counter
}

// read sums one reading of every server.
func (m meter) read() (redisstat.Stats, error) {
	var sum redisstat.Stats
	for _, rdb := range m.rdbs {
		s, err := redisstat.Read(ctx, rdb)
		if err != nil {
			return sum, err
		}
		sum = sum.Add(s)
	}
	return sum, nil
}

// requests is what vmcp sent through ctr (0 without one).
func (m meter) requests() int64 {
	if m.ctr == nil {
		return 0
	}
	return m.ctr.Requests()
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
	s0, err := m.read()
	if err != nil {
		return phase{}, err
	}
	r0, t0 := m.requests(), time.Now()
	if err := f(); err != nil {
		return phase{}, err
	}
	dur, r1 := time.Since(t0), m.requests()
	s1, err := m.read()
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

// redisTopo = flag: which Redis the redis row runs on.
var redisTopo = flag.String("redis-topology", "redis,cluster", "Redis deployments of the redis row: redis (one redis-server), cluster (a Redis Cluster of three primaries)")

// runRedis runs the redis row on each topology of -redis-topology.
func runRedis(tmp string) error {
	if _, err := exec.LookPath("redis-server"); err != nil {
		fmt.Println("\n== Redis cost of Legacy sessions: skipped: redis-server is not on PATH (make redis installs it)")
		return nil
	}
	for _, topo := range strings.Split(*redisTopo, ",") {
		var err error
		switch topo {
		case "redis":
			err = runRedisOne(tmp)
		case "cluster":
			err = runRedisCluster(tmp)
		default:
			err = fmt.Errorf("-redis-topology: unknown %q (want redis, cluster)", topo)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// runRedisOne runs the redis row on one private redis-server.
func runRedisOne(tmp string) error {
	n := *redisN
	fmt.Printf("\n== Redis cost of %d Legacy sessions on one node (GET streams open; private redis-server)\n", n)
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
	return redisRow(tmp, "redis", clusterYAML("redis_url: "+ctr.URL(), "bench-a"), meter{[]*redis.Client{rdb}, ctr}, n)
}

// runRedisCluster runs the redis row on a private Redis Cluster of three
// primaries (no replicas).
func runRedisCluster(tmp string) error {
	n := *redisN
	fmt.Printf("\n== Redis cost of %d Legacy sessions on one node (GET streams open; private Redis Cluster of 3 primaries)\n", n)
	rc, err := clustertest.LaunchCluster(3, tmp)
	defer rc.Stop()
	if err != nil {
		return err
	}
	var m meter
	for _, a := range rc.Addrs {
		rdb := redis.NewClient(&redis.Options{Addr: a, PoolSize: 1, MinIdleConns: 1})
		defer rdb.Close()
		m.rdbs = append(m.rdbs, rdb)
	}
	return redisRow(tmp, "redis cluster", clusterYAML("redis_cluster: ["+strings.Join(rc.Addrs, ", ")+"]", "bench-a"), m, n)
}

// redisRow runs one node with yaml in front of the echo backend and
// measures n sessions on m; name labels the printed lines.
func redisRow(tmp, name, yaml string, m meter, n int) error {
	be, beURL, err := startListening(*echoBin, []string{"-tools", "0"}, nil)
	if err != nil {
		return fmt.Errorf("echoserver: %w", err)
	}
	defer be.stop()
	vm, vmURL, err := startVMCP(tmp, beURL, yaml)
	if err != nil {
		return fmt.Errorf("vmcp: %w", err)
	}
	defer vm.stop()
	p, err := redisRun(m, vmURL, n)
	if err != nil {
		return fmt.Errorf("redis row: %w (vmcp stderr: %s)", err, vm.stderr)
	}
	printRedis(p, name, n, m.ctr != nil)
	return nil
}
