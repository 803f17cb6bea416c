package cluster

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
)

// commandCounts reads Redis INFO commandstats: calls per command, without
// INFO itself and the connection handshake (HELLO, CLIENT).
func commandCounts(t *testing.T, rdb *redis.Client) map[string]int64 {
	t.Helper()
	s, err := rdb.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	out := map[string]int64{}
	for line := range strings.Lines(s) {
		name, rest, ok := strings.Cut(strings.TrimSpace(line), ":")
		name, isCmd := strings.CutPrefix(name, "cmdstat_")
		if !ok || !isCmd || name == "info" || name == "hello" || strings.HasPrefix(name, "client") {
			continue
		}
		calls, _, _ := strings.Cut(strings.TrimPrefix(rest, "calls="), ",")
		out[name], _ = strconv.ParseInt(calls, 10, 64)
	}
	return out
}

// Before GET-stream leases were node-local and session records were kept
// alive by the node record, an idle session cost Redis 130 commands a
// minute: every stream's lease renewed every 2 s (EVALSHA: GET, SET) and
// every session record and event log re-set every heartbeat. Now an idle
// node with N open streams issues its heartbeat (SET, SADD) and, every
// SessionTTL/3, one SET and one PEXPIRE per session: nothing per stream.
func TestClusterIdleSessionsCostRedisOnlyTheirRefresh(t *testing.T) {
	const n = 40
	srv := clustertest.Start(t) // private: nothing else counts here
	timing := fast
	timing.Heartbeat, timing.SessionTTL, timing.StreamPing = 50*time.Millisecond, 600*time.Millisecond, 20*time.Millisecond
	c, err := New(Options{MaxEventsPerSession: testMaxEvents, Redis: Redis{URL: srv.URL()}, KeyPrefix: "t:", NodeID: "n", AdvertiseURL: "http://127.0.0.1:1", Timing: timing, Logger: discard})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.ServeStream(w, r, r.URL.Query().Get("s"), sdkLike)
	}))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	for i := range n {
		id := fmt.Sprint("S", i)
		startSession(t, c, id)
		resp, _ := openStream(t, hs.URL+"?s="+id)
		require.Equal(t, http.StatusOK, resp.StatusCode)
	}
	rdb := clustertest.Client(t, srv.URL())
	before, start := commandCounts(t, rdb), time.Now()
	after := awaitCommands(t, rdb, "pexpire", before["pexpire"]+6*n) // six refresh rounds, over 50 stream pings
	elapsed := time.Since(start)

	c.mu.Lock()
	open := len(c.holders)
	c.mu.Unlock()
	require.Equal(t, n, open, "every stream stayed open (pinged, not ended)")
	got := map[string]int64{}
	var total int64
	for cmd, calls := range after {
		if d := calls - before[cmd]; d > 0 {
			got[cmd], total = d, total+d
		}
	}
	beats := int64(elapsed/timing.Heartbeat) + 1
	refreshes := int64(elapsed/(timing.SessionTTL/3)) + 1
	require.Zero(t, got["evalsha"]+got["eval"]+got["get"], "no per-stream lease commands: %v", got)
	require.LessOrEqual(t, got["pexpire"], refreshes*n, "event logs renewed once per refresh period: %v", got)
	require.LessOrEqual(t, total, 2*beats+2*n*refreshes, "heartbeat plus at most the refresh budget per session: %v over %s", got, elapsed)
}

// awaitCommands waits until Redis has run cmd at least want times in all
// (commandCounts) and returns the counts then.
func awaitCommands(t *testing.T, rdb *redis.Client, cmd string, want int64) map[string]int64 {
	t.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(eventWait); ; <-tick.C {
		got := commandCounts(t, rdb)
		if got[cmd] >= want {
			return got
		}
		require.True(t, time.Now().Before(deadline), "%s ran %d times, not %d", cmd, got[cmd], want)
	}
}

// Session records now live for minutes and are re-set only every
// SessionTTL/3, so Redis data loss is no longer repaired by the next
// routine refresh: the heartbeat sees its node record gone and re-asserts
// every record at once. A FLUSHALL-like loss of the node's keys is
// repaired within a heartbeat, and Redis is never seen as down.
func TestClusterRedisDataLossIsRepairedWithinAHeartbeat(t *testing.T) {
	srv := clustertest.Start(t)
	timing := fast
	timing.SessionTTL = time.Minute // the routine refresh is 20 s away
	c, err := New(Options{MaxEventsPerSession: testMaxEvents, Redis: Redis{URL: srv.URL()}, KeyPrefix: "t:", NodeID: "n", AdvertiseURL: "http://127.0.0.1:1", Timing: timing, Logger: discard})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	ids := []string{"S1", "S2", "S3"}
	for _, id := range ids {
		require.NoError(t, c.SessionStarted(ctx, id, "", 0))
	}
	require.NoError(t, clustertest.DeleteKeys(srv.URL(), "t:"))
	_, err = c.liveOwner(ctx, "S1")
	require.ErrorIs(t, err, ErrNotFound, "the records are gone")
	require.Eventually(t, func() bool {
		for _, id := range ids {
			if owner, err := c.liveOwner(ctx, id); err != nil || owner.ID != "n" {
				return false
			}
		}
		return true
	}, eventWait, 5*time.Millisecond, "re-asserted by the next heartbeat")
	require.NoError(t, c.Check(), "the connection never failed")
	require.True(t, c.upSince().IsZero(), "Redis was never seen down")
}

// Session records outlive their node by up to SessionTTL (minutes) now;
// what makes them count is the owner's node record. A node that dies (cut
// off Redis, no goodbye) leaves its session records behind, yet its
// sessions are unknown as soon as its node record expires (NodeTTL).
func TestClusterDeadNodesSessionsAreUnknownOnceItsNodeRecordExpires(t *testing.T) {
	url := clustertest.URL(t)
	prefix := clustertest.Prefix(t, url)
	proxy := clustertest.NewProxy(t, url)
	timing := fast
	timing.SessionTTL = time.Minute
	opts := func(redisURL, id string) Options {
		return Options{MaxEventsPerSession: testMaxEvents, Redis: Redis{URL: redisURL}, KeyPrefix: prefix, NodeID: id, AdvertiseURL: "http://127.0.0.1:1", Timing: timing, Logger: discard}
	}
	live, err := New(opts(url, "live"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = live.Close() })
	doomed, err := New(opts(proxy.URL(), "doomed"))
	require.NoError(t, err)
	t.Cleanup(func() { _ = doomed.Close() })
	ctx := context.Background()
	require.NoError(t, doomed.SessionStarted(ctx, "S", "", 0))
	owner, err := live.liveOwner(ctx, "S")
	require.NoError(t, err)
	require.Equal(t, "doomed", owner.ID)

	proxy.Cut()
	owner, err = live.liveOwner(ctx, "S")
	require.NoError(t, err, "known while its node record lives")
	require.Equal(t, "doomed", owner.ID)
	elapseUntil(t, live.redis, timing.NodeTTL, func() bool { // nothing renews the doomed node's record now
		_, err := live.liveOwner(ctx, "S")
		return errors.Is(err, ErrNotFound)
	}, "unknown once the node record expired")
	n, err := clustertest.Client(t, url).Exists(ctx, prefix+"sess:S").Result()
	require.NoError(t, err)
	require.EqualValues(t, 1, n, "the orphaned record is still there (it expires after SessionTTL)")
}
