package cluster

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
)

func TestClusterMemoryModeNeedsNothing(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { // fake time: the heartbeat's beats are not raced
		c, err := New(Options{MaxEventsPerSession: testMaxEvents, Timing: fast})
		require.NoError(t, err)
		defer c.Close()
		require.NoError(t, c.Check())
		require.Equal(t, "memory", c.Status().Store)
		require.NoError(t, c.SessionStarted(context.Background(), "S", "", 0))
		require.Equal(t, 1, c.Status().Owned)
		time.Sleep(3 * fast.SessionTTL) // the bubble's clock
		owner, err := c.liveOwner(context.Background(), "S")
		require.NoError(t, err, "the heartbeat keeps records alive")
		require.Equal(t, c.Self(), owner)
		c.SessionEnded("S")
		_, err = c.liveOwner(context.Background(), "S")
		require.ErrorIs(t, err, ErrNotFound)
	})
}

func TestClusterModeRequiresAdvertiseURL(t *testing.T) {
	_, err := New(Options{MaxEventsPerSession: testMaxEvents, Redis: Redis{URL: "redis://127.0.0.1:1/0"}})
	require.ErrorContains(t, err, "advertise")
}

// A node that dies (cut off Redis, no goodbye) leaves records that expire
// within their TTL; until then its sessions' owner is named, after that not.
func TestClusterDeadNodeRecordsExpire(t *testing.T) {
	url := clustertest.URL(t)
	prefix := clustertest.Prefix(t, url)
	proxy := clustertest.NewProxy(t, url)
	live := testCluster(t, url, prefix, "live", "http://127.0.0.1:1")
	doomed := testCluster(t, proxy.URL(), prefix, "doomed", "http://127.0.0.1:2")
	ctx := context.Background()
	require.NoError(t, doomed.SessionStarted(ctx, "S", "", 0))
	awaitRenewed(t, live.redis, live.redis.keys.node("doomed"), fast.NodeTTL)
	awaitRenewed(t, live.redis, live.redis.keys.sess("S"), fast.SessionTTL)
	owner, err := live.liveOwner(ctx, "S")
	require.NoError(t, err, "refreshed by the heartbeat")
	require.Equal(t, "doomed", owner.ID)

	proxy.Cut()
	rdb := clustertest.Client(t, url)
	elapseUntil(t, live.redis, fast.SessionTTL, func() bool { // nothing renews the doomed node's records now
		_, err := live.liveOwner(ctx, "S")
		keys, kerr := clustertest.Keys(ctx, rdb, prefix+"sess:")
		return errors.Is(err, ErrNotFound) && kerr == nil && len(keys) == 0
	}, "the dead node's records expired")
}

// elapseUntil moves Redis time forward by d (elapseRedis) until done
// holds: a write of a node cut off Redis that was in flight through the
// proxy when it was cut may land after one move.
func elapseUntil(t *testing.T, c *redisConn, d time.Duration, done func() bool, what string) {
	t.Helper()
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(eventWait); ; <-tick.C {
		elapseRedis(t, c, d)
		if done() {
			return
		}
		require.True(t, time.Now().Before(deadline), what)
	}
}

// awaitRenewed sets key's TTL far beyond ttl and waits until something
// (the heartbeat) sets it again, within ttl: proof that it renews key.
func awaitRenewed(t *testing.T, c *redisConn, key string, ttl time.Duration) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, c.rdb.PExpire(ctx, key, time.Hour).Err())
	require.Eventually(t, func() bool {
		left, err := c.rdb.PTTL(ctx, key).Result()
		return err == nil && left > 0 && left <= ttl
	}, eventWait, 10*time.Millisecond, "%s renewed", key)
}

// Redis stops: Check fails naming Redis, promptly. Redis comes back empty:
// Check recovers, the node re-registers itself and its sessions, and in
// between an unknown session is "retry" (ErrUnavailable), not "gone".
func TestClusterRedisOutageAndRecovery(t *testing.T) {
	srv := clustertest.Start(t)
	c := testCluster(t, srv.URL(), "t:", "n1", "http://127.0.0.1:1")
	ctx := context.Background()
	require.NoError(t, c.Check())
	require.NoError(t, c.SessionStarted(ctx, "S", "", 0))

	srv.Stop()
	require.Eventually(t, func() bool { return c.Check() != nil }, eventWait, 10*time.Millisecond)
	err := c.Check()
	require.ErrorIs(t, err, ErrUnavailable)
	require.True(t, strings.Contains(err.Error(), "Redis at "+srv.Addr), err.Error())
	require.Contains(t, c.Status().Redis, "unavailable")
	_, err = c.liveOwner(ctx, "S")
	require.ErrorIs(t, err, ErrUnavailable)

	srv.Restart()
	require.Eventually(t, func() bool { return c.Check() == nil }, eventWait, 10*time.Millisecond)
	_, err = c.liveOwner(ctx, "unknown")
	require.ErrorIs(t, err, ErrUnavailable, "just after recovery, a missing record may be one not yet re-registered")
	require.Eventually(t, func() bool {
		owner, err := c.liveOwner(ctx, "S")
		return err == nil && owner.ID == "n1"
	}, eventWait, 5*time.Millisecond, "the owner re-registers its session after Redis lost it")
	require.Eventually(t, func() bool {
		_, err := c.liveOwner(ctx, "unknown")
		return errors.Is(err, ErrNotFound)
	}, eventWait, 10*time.Millisecond, "a missing record is gone once every live node has renewed its record (NodeTTL)")
	require.GreaterOrEqual(t, time.Since(c.upSince()), c.recoveryWindow(), "not before")
}

func TestClusterSessionsPerPrincipalAreLimited(t *testing.T) {
	c := testCluster(t, "", "", "n", "")
	ctx := context.Background()
	require.NoError(t, c.SessionStarted(ctx, "a1", "alice", 2))
	require.NoError(t, c.SessionStarted(ctx, "a2", "alice", 2))
	err := c.SessionStarted(ctx, "a3", "alice", 2)
	require.ErrorIs(t, err, ErrPrincipalLimit)
	require.Contains(t, err.Error(), "sessions.max_per_principal is 2")
	require.NoError(t, c.SessionStarted(ctx, "b1", "bob", 2), "other principals are not affected")
	for i := range 3 {
		require.NoError(t, c.SessionStarted(ctx, fmt.Sprint("anon", i), "", 2), "anonymous sessions are bounded by sessions.max only")
	}
	p, ok := c.SessionPrincipal("a1")
	require.True(t, ok)
	require.Equal(t, "alice", p)
	c.SessionEnded("a1")
	_, ok = c.SessionPrincipal("a1")
	require.False(t, ok)
	require.NoError(t, c.SessionStarted(ctx, "a3", "alice", 2), "an ended session frees its place")
}

// refreshGate is a Directory whose Refresh waits, once it has read its
// sessions, until released: a session can end in between.
type refreshGate struct {
	Directory
	entered, release chan struct{}
}

func (g *refreshGate) Refresh(ctx context.Context, node string, sessions map[string]string, ttl time.Duration) error {
	close(g.entered)
	<-g.release
	return g.Directory.Refresh(ctx, node, sessions, ttl)
}

// A session that ended while the heartbeat was re-asserting its record
// got the record back (the refresh's SET landed after SessionEnded's
// DEL): another node found an owner for a session that no longer existed
// until the record expired, SessionTTL later (CI: "keys of closed
// sessions left behind").
func TestClusterSessionEndedDuringARefreshLeavesNoRecord(t *testing.T) {
	timing := fast
	timing.Heartbeat = time.Hour // only the test's own refresh runs
	c, err := New(Options{MaxEventsPerSession: testMaxEvents, Timing: timing})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	require.NoError(t, c.SessionStarted(ctx, "S", "", 0))
	gate := &refreshGate{Directory: c.dir, entered: make(chan struct{}), release: make(chan struct{})}
	c.dir = gate
	done := make(chan error, 1)
	go func() { done <- c.refresh(ctx) }()
	<-gate.entered
	c.SessionEnded("S")
	close(gate.release)
	require.NoError(t, <-done)
	_, _, err = c.dir.Lookup(ctx, "S")
	require.ErrorIs(t, err, ErrNotFound, "the ended session's record")
}

// testMaxEvents is cluster.max_events_per_session's default, which New
// takes from its options (pkg/config fills it in).
const testMaxEvents = 1000

// The cluster fills in none of pkg/config's defaults: options without the
// bound of events per session, or a Redis cluster without a key prefix,
// are refused naming the config key.
func TestClusterOptionsWithoutConfigDefaultsAreRefused(t *testing.T) {
	t.Parallel()
	_, err := New(Options{})
	require.ErrorContains(t, err, "cluster.max_events_per_session")
	_, err = New(Options{MaxEventsPerSession: 1, Redis: Redis{URL: "redis://127.0.0.1:1/0"}, AdvertiseURL: "http://127.0.0.1:1"})
	require.ErrorContains(t, err, "cluster.key_prefix")
}
