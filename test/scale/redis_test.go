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

// privateRedis starts a private redis-server for this test (no other
// test's commands in its counts) and returns it with a one-connection
// client for reading it.
func privateRedis(t *testing.T) (*clustertest.Server, *redis.Client) {
	t.Helper()
	rs := clustertest.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr, PoolSize: 1})
	t.Cleanup(func() { _ = rdb.Close() })
	_, err := redisstat.Read(context.Background(), rdb) // connect now: its HELLO is in no phase
	require.NoError(t, err)
	return rs, rdb
}

// phase is the Redis delta over one step of the test and its duration.
type phase struct {
	d   redisstat.Stats
	dur time.Duration
}

// measure runs f between two readings of rdb.
func measure(t *testing.T, rdb *redis.Client, f func()) phase {
	t.Helper()
	ctx := context.Background()
	s0, err := redisstat.Read(ctx, rdb)
	require.NoError(t, err)
	t0 := time.Now()
	f()
	dur := time.Since(t0)
	s1, err := redisstat.Read(ctx, rdb)
	require.NoError(t, err)
	return phase{s1.Sub(s0), dur}
}

// keysNow is the number of keys in rdb's db 0 (from INFO, so reading it
// adds no counted command).
func keysNow(t *testing.T, rdb *redis.Client) int64 {
	t.Helper()
	s, err := redisstat.Read(context.Background(), rdb)
	require.NoError(t, err)
	return s.Keys
}

// waitKeys waits up to 10 s until rdb holds at most want keys (cleanup
// after DELETE may finish after the response).
func waitKeys(t *testing.T, rdb *redis.Client, want int64) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); keysNow(t, rdb) > want; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			ks, _ := rdb.Keys(context.Background(), "*").Result()
			t.Fatalf("Redis holds %d keys 10s after the last DELETE, want %d (those before any session): %v", keysNow(t, rdb), want, ks)
		}
	}
}

// sessionKeys lists the keys in rdb naming one of ids.
func sessionKeys(t *testing.T, rdb *redis.Client, ids []string) []string {
	t.Helper()
	keys, err := rdb.Keys(context.Background(), "*").Result()
	require.NoError(t, err)
	var out []string
	for _, k := range keys {
		if slices.ContainsFunc(ids, func(id string) bool { return strings.Contains(k, id) }) {
			out = append(out, k)
		}
	}
	return out
}

// requireNoSessionKeys fails if a key in rdb still names one of ids
// within of their DELETEs (a session is released on a goroutine after
// its DELETE is answered). Keep within below the records' TTL, so that a
// record re-set after its release is caught before it expires.
func requireNoSessionKeys(t *testing.T, rdb *redis.Client, ids []string, within time.Duration) {
	t.Helper()
	deadline := time.Now().Add(within)
	for len(sessionKeys(t, rdb, ids)) > 0 && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	require.Empty(t, sessionKeys(t, rdb, ids), "keys of closed sessions left behind %s after their DELETEs", within)
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
