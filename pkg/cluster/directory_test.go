package cluster

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
)

// fast is a Timing for tests: records expire within a second.
var fast = Timing{
	Heartbeat:    100 * time.Millisecond,
	NodeTTL:      500 * time.Millisecond,
	SessionTTL:   500 * time.Millisecond,
	StreamTTL:    600 * time.Millisecond,
	OpTimeout:    300 * time.Millisecond,
	Probe:        50 * time.Millisecond,
	DialTimeout:  500 * time.Millisecond,
	WriteTimeout: time.Second,
}

// testConn is a redisConn on the test Redis under a fresh prefix.
func testConn(t *testing.T) *redisConn {
	t.Helper()
	url := clustertest.URL(t)
	c, err := newRedisConn(url, clustertest.Prefix(t, url), time.Second, discard)
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.close() })
	return c
}

// backends runs f on the memory and the Redis implementation.
func backends(t *testing.T, f func(t *testing.T, d Directory, l Leases)) {
	t.Run("memory", func(t *testing.T) { f(t, newMemoryDirectory(), newMemoryLeases()) })
	t.Run("redis", func(t *testing.T) {
		c := testConn(t)
		f(t, &redisDirectory{c: c}, &redisLeases{c: c})
	})
}

func TestClusterDirectoryContract(t *testing.T) {
	backends(t, func(t *testing.T, d Directory, _ Leases) {
		ctx := context.Background()
		a := NodeInfo{ID: "a", URL: "http://127.0.0.1:1"}
		b := NodeInfo{ID: "b", URL: "http://127.0.0.1:2"}
		require.NoError(t, d.Announce(ctx, a, time.Minute))
		require.NoError(t, d.Announce(ctx, b, time.Minute))
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
	})
}

// The owner record carries the principal that created the session, on
// every node, through claims, refreshes and releases.
func TestClusterDirectoryRecordsCarryThePrincipal(t *testing.T) {
	backends(t, func(t *testing.T, d Directory, _ Leases) {
		ctx := context.Background()
		a := NodeInfo{ID: "a", URL: "http://127.0.0.1:1"}
		require.NoError(t, d.Announce(ctx, a, time.Minute))
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
	})
}

func TestClusterDirectoryRecordsExpireAndRefreshRecreates(t *testing.T) {
	backends(t, func(t *testing.T, d Directory, _ Leases) {
		ctx := context.Background()
		a := NodeInfo{ID: "a", URL: "http://127.0.0.1:1"}
		require.NoError(t, d.Announce(ctx, a, time.Minute))
		require.NoError(t, d.Claim(ctx, "s", "a", "", 150*time.Millisecond))
		require.NoError(t, d.Refresh(ctx, "a", map[string]string{"s": ""}, 150*time.Millisecond))
		time.Sleep(300 * time.Millisecond)
		_, _, err := d.Lookup(ctx, "s")
		require.ErrorIs(t, err, ErrNotFound, "an unrefreshed record expires")
		require.NoError(t, d.Refresh(ctx, "a", map[string]string{"s": ""}, time.Minute))
		owner, _, err := d.Lookup(ctx, "s")
		require.NoError(t, err, "refresh re-creates a lost record")
		require.Equal(t, a, owner)

		require.NoError(t, d.Announce(ctx, NodeInfo{ID: "b", URL: "http://127.0.0.1:2"}, 150*time.Millisecond))
		time.Sleep(300 * time.Millisecond)
		_, err = d.Node(ctx, "b")
		require.ErrorIs(t, err, ErrNotFound, "a node that stops announcing is dead")
	})
}

func TestClusterLeasesContract(t *testing.T) {
	backends(t, func(t *testing.T, _ Directory, l Leases) {
		ctx := context.Background()
		ok, err := l.Hold(ctx, "k", "one", 200*time.Millisecond)
		require.NoError(t, err)
		require.True(t, ok)
		ok, err = l.Hold(ctx, "k", "two", time.Minute)
		require.NoError(t, err)
		require.False(t, ok, "held by another")
		ok, err = l.Hold(ctx, "k", "one", 200*time.Millisecond)
		require.NoError(t, err)
		require.True(t, ok, "renewed by its holder")
		require.NoError(t, l.Drop(ctx, "k", "two"), "dropping another's lease is a no-op")
		ok, _ = l.Hold(ctx, "k", "two", time.Minute)
		require.False(t, ok)
		time.Sleep(350 * time.Millisecond)
		ok, err = l.Hold(ctx, "k", "two", time.Minute)
		require.NoError(t, err)
		require.True(t, ok, "a lease not renewed lapses")
		require.NoError(t, l.Drop(ctx, "k", "two"))
		ok, _ = l.Hold(ctx, "k", "three", time.Minute)
		require.True(t, ok, "a dropped lease is free")
	})
}

func TestClusterRedisDownFailsFastWithErrUnavailableAndRecovers(t *testing.T) {
	srv := clustertest.Start(t)
	c, err := newRedisConn(srv.URL(), "t:", 300*time.Millisecond, discard)
	require.NoError(t, err)
	defer c.close()
	d := &redisDirectory{c: c}
	ctx := context.Background()
	require.NoError(t, d.Announce(ctx, NodeInfo{ID: "a", URL: "http://x"}, time.Minute))

	srv.Stop()
	_, _, err = d.Lookup(ctx, "s")
	require.ErrorIs(t, err, ErrUnavailable)
	require.Contains(t, err.Error(), "Redis at "+srv.Addr)
	start := time.Now()
	_, _, err = d.Lookup(ctx, "s")
	require.ErrorIs(t, err, ErrUnavailable)
	require.Less(t, time.Since(start), 50*time.Millisecond, "while known down, operations fail at once")
	require.Error(t, c.probe(ctx))

	srv.Restart()
	require.NoError(t, c.probe(ctx))
	require.NoError(t, c.err())
	_, _, err = d.Lookup(ctx, "s")
	require.True(t, errors.Is(err, ErrNotFound), "data is gone with the restart: %v", err)
}
