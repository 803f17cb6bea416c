package scale

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
	"github.com/vmcp/vmcp/test/internal/redisstat"
)

// redisView reads a test's private Redis: one redis-server, or every
// primary of a Redis Cluster with their figures summed. Its clients have
// one connection each (connected at once: no HELLO in a measured phase).
type redisView struct {
	topo      clustertest.Redis
	primaries []*redis.Client
}

// privateRedis starts a private Redis of topology kind ("redis": one
// redis-server; "cluster": a Redis Cluster of three primaries) for this
// test, so that no other test's commands are in its counts.
func privateRedis(t *testing.T, kind string) *redisView {
	t.Helper()
	v := &redisView{}
	if kind == "cluster" {
		v.topo = clustertest.StartCluster(t, 3)
	} else {
		v.topo = clustertest.Redis{Name: kind, URL: clustertest.Start(t).URL()}
	}
	addrs := v.topo.Cluster
	if v.topo.URL != "" {
		o, err := redis.ParseURL(v.topo.URL)
		require.NoError(t, err)
		addrs = []string{o.Addr}
	}
	for _, a := range addrs {
		rdb := redis.NewClient(&redis.Options{Addr: a, PoolSize: 1})
		t.Cleanup(func() { _ = rdb.Close() })
		v.primaries = append(v.primaries, rdb)
	}
	v.read(t)
	return v
}

// read sums one reading of every primary.
func (v *redisView) read(t *testing.T) redisstat.Stats {
	t.Helper()
	var sum redisstat.Stats
	for _, rdb := range v.primaries {
		s, err := redisstat.Read(context.Background(), rdb)
		require.NoError(t, err)
		sum = sum.Add(s)
	}
	return sum
}

// allKeys lists every key of every primary.
func (v *redisView) allKeys(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, rdb := range v.primaries {
		keys, err := rdb.Keys(context.Background(), "*").Result()
		require.NoError(t, err)
		out = append(out, keys...)
	}
	return out
}

// phase is the Redis delta over one step of the test and its duration.
type phase struct {
	d   redisstat.Stats
	dur time.Duration
}

// measure runs f between two readings of v.
func measure(t *testing.T, v *redisView, f func()) phase {
	t.Helper()
	s0 := v.read(t)
	t0 := time.Now()
	f()
	dur := time.Since(t0)
	return phase{v.read(t).Sub(s0), dur}
}

// keysNow is the number of keys in v (from INFO, so reading it adds no
// counted command).
func keysNow(t *testing.T, v *redisView) int64 {
	t.Helper()
	return v.read(t).Keys
}

// waitKeys waits up to 30 s until v holds at most want keys (cleanup
// after DELETE may finish after the response).
func waitKeys(t *testing.T, v *redisView, want int64) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(30 * time.Second); keysNow(t, v) > want; <-tick.C {
		if time.Now().After(deadline) {
			t.Fatalf("Redis holds %d keys 30s after the last DELETE, want %d (those before any session): %v", keysNow(t, v), want, v.allKeys(t))
		}
	}
}

// sessionKeys lists the keys in v naming one of ids.
func sessionKeys(t *testing.T, v *redisView, ids []string) []string {
	t.Helper()
	var out []string
	for _, k := range v.allKeys(t) {
		if slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(k, id) }) {
			out = append(out, k)
		}
	}
	return out
}

// requireNoSessionKeys fails if keys naming one of ids are still in v
// 20 s after their DELETEs (a session is released on a goroutine after
// its DELETE is answered), or come back within the nodes' next beats
// heartbeats in all: a record re-set by a refresh after its release is
// caught before it expires.
func requireNoSessionKeys(t *testing.T, v *redisView, ids []string, beats int) {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(20 * time.Second); len(sessionKeys(t, v, ids)) > 0 && time.Now().Before(deadline); {
		<-tick.C
	}
	require.Empty(t, sessionKeys(t, v, ids), "keys of closed sessions left behind 20 s after their DELETEs")
	if beats > 0 {
		awaitBeats(t, v, beats)
		require.Empty(t, sessionKeys(t, v, ids), "keys of closed sessions re-set by a refresh after their DELETEs")
	}
}

// awaitBeats waits (a minute at most) until the nodes on v have beaten n
// times in all (each heartbeat runs one SADD).
func awaitBeats(t *testing.T, v *redisView, n int) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	s0 := v.read(t)
	for deadline := time.Now().Add(time.Minute); v.read(t).Sub(s0).Calls["sadd"] < int64(n); <-tick.C {
		require.True(t, time.Now().Before(deadline), "the nodes did not beat %d times within a minute", n)
	}
}

// requireOwned checks every node owns want sessions (its /readyz), so
// that requests sent to the other nodes must have been forwarded.
func requireOwned(t *testing.T, nodes []*node, want int) {
	t.Helper()
	for _, n := range nodes {
		resp, err := http.Get("http://" + n.host + "/readyz")
		require.NoError(t, err)
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		require.NoError(t, err)
		var v struct {
			Cluster struct {
				Sessions int `json:"sessions"`
			} `json:"cluster"`
		}
		require.NoError(t, json.Unmarshal(b, &v), "node %s /readyz: %s", n.name, b)
		require.Equal(t, want, v.Cluster.Sessions, "sessions owned by node %s", n.name)
	}
}

// sessionIDs are the sessions' IDs.
func sessionIDs(ss []*session) []string {
	ids := make([]string, len(ss))
	for i, s := range ss {
		ids[i] = s.cs.ID()
	}
	return ids
}
