package cluster

import (
	"context"
	"errors"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
)

// fast is a Timing for tests: short periods (beats, pings, probes), so
// what they do shows at once, and long lifetimes and operation bounds, so
// that a loaded machine starving the heartbeat for seconds neither expires
// a live node's records nor marks Redis down. Tests of expiry drive it
// (elapseRedis, the memory store's clock) or shorten a TTL of their own.
var fast = Timing{
	Heartbeat:    100 * time.Millisecond,
	NodeTTL:      5 * time.Second,
	SessionTTL:   5 * time.Second,
	StreamPing:   200 * time.Millisecond,
	OpTimeout:    5 * time.Second,
	Probe:        50 * time.Millisecond,
	DialTimeout:  5 * time.Second,
	WriteTimeout: time.Second,
}

// eventWait bounds a wait for what the code under test does on its own (a
// heartbeat, a probe, a refresh): generous, as a loaded machine can
// starve it for seconds.
const eventWait = 20 * time.Second

// testConn is a redisConn on the test Redis under a fresh prefix.
func testConn(t *testing.T) *redisConn {
	t.Helper()
	url := clustertest.URL(t)
	c, err := newRedisConn(Redis{URL: url}, clustertest.Prefix(t, url), fast.OpTimeout, discard)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.close() })
	return c
}

// backends runs f on the memory and the Redis implementation.
func backends(t *testing.T, f func(t *testing.T, d Directory)) {
	timedBackends(t, func(t *testing.T, d Directory, _ func(time.Duration)) { f(t, d) })
}

// timedBackends runs f on the memory and the Redis implementation with
// elapse, which moves the directory's time forward by a duration: the
// memory store's clock, and on Redis every key's remaining TTL (PTTL
// minus it; deleted at zero). Expiry is driven, not raced: a record
// renewed with a minute's TTL lives however slow the machine is, and one
// elapse later it has expired.
func timedBackends(t *testing.T, f func(t *testing.T, d Directory, elapse func(time.Duration))) {
	t.Run("memory", func(t *testing.T) {
		s := newMemStore()
		now := time.Now()
		s.now = func() time.Time { return now } // f's goroutine only
		f(t, &memDirectory{s: s}, func(d time.Duration) { now = now.Add(d) })
	})
	t.Run("redis", func(t *testing.T) {
		c := testConn(t)
		f(t, &redisDirectory{c: c}, func(d time.Duration) { elapseRedis(t, c, d) })
	})
}

// elapseRedis shortens the TTL of every key under c's prefix by d,
// deleting those whose TTL ends within d (keys without a TTL are kept).
func elapseRedis(t *testing.T, c *redisConn, d time.Duration) {
	t.Helper()
	ctx := context.Background()
	keys, err := clustertest.AllKeys(ctx, c.rdb, c.keys.prefix)
	require.NoError(t, err)
	for _, k := range keys {
		ttl, err := c.rdb.PTTL(ctx, k).Result()
		require.NoError(t, err)
		switch {
		case ttl < 0: // no TTL (-1) or gone meanwhile (-2)
		case ttl <= d:
			require.NoError(t, c.rdb.Del(ctx, k).Err())
		default:
			require.NoError(t, c.rdb.PExpire(ctx, k, ttl-d).Err())
		}
	}
}

func TestClusterDirectoryContract(t *testing.T) { backends(t, contractBasics) }

func contractBasics(t *testing.T, d Directory) {
	ctx := context.Background()
	a := NodeInfo{ID: "a", URL: "http://127.0.0.1:1"}
	b := NodeInfo{ID: "b", URL: "http://127.0.0.1:2"}
	announce(t, d, a, time.Minute)
	announce(t, d, b, time.Minute)
	n, err := d.Node(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, a, n)
	_, err = d.Node(ctx, "zz")
	require.ErrorIs(t, err, ErrNotFound)
	nodes, err := d.Nodes(ctx)
	require.NoError(t, err)
	require.ElementsMatch(t, []NodeInfo{a, b}, nodes)

	require.NoError(t, d.Claim(ctx, "s1", "a", "", time.Minute))
	require.NoError(t, d.Claim(ctx, "s1", "a", "", time.Minute), "re-claim by the owner")
	require.ErrorIs(t, d.Claim(ctx, "s1", "b", "", time.Minute), ErrConflict)
	owner, _, err := d.Lookup(ctx, "s1")
	require.NoError(t, err)
	require.Equal(t, a, owner)
	_, _, err = d.Lookup(ctx, "nope")
	require.ErrorIs(t, err, ErrNotFound)

	require.NoError(t, d.Release(ctx, "s1", "b"), "release by another node is a no-op")
	_, _, err = d.Lookup(ctx, "s1")
	require.NoError(t, err)
	require.NoError(t, d.Release(ctx, "s1", "a"))
	_, _, err = d.Lookup(ctx, "s1")
	require.ErrorIs(t, err, ErrNotFound)

	// A session of a node that left (or died) has no live owner.
	require.NoError(t, d.Claim(ctx, "s2", "b", "", time.Minute))
	require.NoError(t, d.Withdraw(ctx, "b"))
	_, _, err = d.Lookup(ctx, "s2")
	require.ErrorIs(t, err, ErrNotFound)
	nodes, err = d.Nodes(ctx)
	require.NoError(t, err)
	require.Equal(t, []NodeInfo{a}, nodes)
}

// The owner record carries the principal that created the session, on
// every node, through claims, refreshes and releases.
func TestClusterDirectoryRecordsCarryThePrincipal(t *testing.T) {
	backends(t, contractRecordsCarryThePrincipal)
}

func contractRecordsCarryThePrincipal(t *testing.T, d Directory) {
	ctx := context.Background()
	a := NodeInfo{ID: "a", URL: "http://127.0.0.1:1"}
	announce(t, d, a, time.Minute)
	alice := "https://idp\x00alice" // identity.Principal.Key: NUL inside
	require.NoError(t, d.Claim(ctx, "s1", "a", alice, time.Minute))
	require.NoError(t, d.Claim(ctx, "s1", "a", alice, time.Minute), "re-claim by the owner")
	require.ErrorIs(t, d.Claim(ctx, "s1", "b", alice, time.Minute), ErrConflict)
	owner, p, err := d.Lookup(ctx, "s1")
	require.NoError(t, err)
	require.Equal(t, a, owner)
	require.Equal(t, alice, p)

	require.NoError(t, d.Refresh(ctx, "a", map[string]string{"s1": alice, "s2": ""}, time.Minute))
	_, p, err = d.Lookup(ctx, "s1")
	require.NoError(t, err)
	require.Equal(t, alice, p, "a refresh keeps the principal")
	_, p, err = d.Lookup(ctx, "s2")
	require.NoError(t, err)
	require.Empty(t, p, "anonymous")

	require.NoError(t, d.Release(ctx, "s1", "b"), "release by another node is a no-op")
	_, _, err = d.Lookup(ctx, "s1")
	require.NoError(t, err)
	require.NoError(t, d.Release(ctx, "s1", "a"), "the owner releases whatever the principal")
	_, _, err = d.Lookup(ctx, "s1")
	require.ErrorIs(t, err, ErrNotFound)
}

func TestClusterDirectoryRecordsExpireAndRefreshRecreates(t *testing.T) {
	timedBackends(t, contractRecordsExpireAndRefreshRecreates)
}

func contractRecordsExpireAndRefreshRecreates(t *testing.T, d Directory, elapse func(time.Duration)) {
	ctx := context.Background()
	a := NodeInfo{ID: "a", URL: "http://127.0.0.1:1"}
	announce(t, d, a, time.Hour)
	require.NoError(t, d.Claim(ctx, "s", "a", "", time.Minute))
	elapse(45 * time.Second)
	require.NoError(t, d.Refresh(ctx, "a", map[string]string{"s": ""}, time.Minute))
	elapse(45 * time.Second)
	_, _, err := d.Lookup(ctx, "s")
	require.NoError(t, err, "a refresh renews the record for its TTL")
	elapse(30 * time.Second)
	_, _, err = d.Lookup(ctx, "s")
	require.ErrorIs(t, err, ErrNotFound, "an unrefreshed record expires")
	require.NoError(t, d.Refresh(ctx, "a", map[string]string{"s": ""}, time.Minute))
	owner, _, err := d.Lookup(ctx, "s")
	require.NoError(t, err, "refresh re-creates a lost record")
	require.Equal(t, a, owner)

	announce(t, d, NodeInfo{ID: "b", URL: "http://127.0.0.1:2"}, time.Minute)
	_, err = d.Node(ctx, "b")
	require.NoError(t, err)
	elapse(2 * time.Minute)
	_, err = d.Node(ctx, "b")
	require.ErrorIs(t, err, ErrNotFound, "a node that stops announcing is dead")
}

// announce announces a node and fails the test on error.
func announce(t *testing.T, d Directory, n NodeInfo, ttl time.Duration) {
	t.Helper()
	_, err := d.Announce(context.Background(), n, ttl)
	require.NoError(t, err)
}

// Announce tells the node when its record was not there (first announce,
// expired, or lost with Redis data): the node re-asserts its sessions then.
func TestClusterDirectoryAnnounceReportsAMissingNodeRecord(t *testing.T) {
	timedBackends(t, contractAnnounceReportsAMissingNodeRecord)
}

func contractAnnounceReportsAMissingNodeRecord(t *testing.T, d Directory, elapse func(time.Duration)) {
	ctx := context.Background()
	a := NodeInfo{ID: "a", URL: "http://127.0.0.1:1"}
	missing, err := d.Announce(ctx, a, time.Minute)
	require.NoError(t, err)
	require.True(t, missing, "the first announce")
	elapse(45 * time.Second)
	missing, err = d.Announce(ctx, a, time.Minute)
	require.NoError(t, err)
	require.False(t, missing, "renewed in time")
	elapse(2 * time.Minute)
	missing, err = d.Announce(ctx, a, time.Minute)
	require.NoError(t, err)
	require.True(t, missing, "expired meanwhile")
	require.NoError(t, d.Withdraw(ctx, "a"))
	missing, err = d.Announce(ctx, a, time.Minute)
	require.NoError(t, err)
	require.True(t, missing, "removed meanwhile")
}

func TestClusterRedisDownFailsFastWithErrUnavailableAndRecovers(t *testing.T) {
	srv := clustertest.Start(t)
	var dials atomic.Int64
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		return (&net.Dialer{}).DialContext(ctx, network, addr)
	}
	c, err := newRedisConn(Redis{URL: srv.URL(), Dialer: dial}, "t:", 10*time.Second, discard)
	require.NoError(t, err)
	defer c.close()
	d := &redisDirectory{c: c}
	ctx := context.Background()
	announce(t, d, NodeInfo{ID: "a", URL: "http://x"}, time.Minute)

	srv.Stop()
	_, _, err = d.Lookup(ctx, "s")
	require.ErrorIs(t, err, ErrUnavailable)
	require.Contains(t, err.Error(), "Redis at "+srv.Addr)
	before := dials.Load()
	_, _, err = d.Lookup(ctx, "s")
	require.ErrorIs(t, err, ErrUnavailable)
	require.Equal(t, before, dials.Load(), "while known down, operations fail at once, without trying Redis")
	require.Error(t, c.probe(ctx))

	srv.Restart()
	require.NoError(t, c.probe(ctx))
	require.NoError(t, c.err())
	_, _, err = d.Lookup(ctx, "s")
	require.True(t, errors.Is(err, ErrNotFound), "data is gone with the restart: %v", err)
}
