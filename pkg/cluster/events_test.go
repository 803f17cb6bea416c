package cluster

import (
	"context"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
)

var discard = slog.New(slog.DiscardHandler)

// testEvents is a Redis event store on c, closed when the test ends.
func testEvents(t *testing.T, c *redisConn, maxLen int) *redisEvents {
	e := newRedisEvents(c, maxLen, time.Minute, discard, nil)
	t.Cleanup(e.close)
	return e
}

// after collects an After iteration: the messages, or the error.
func after(t *testing.T, s mcp.EventStore, session, stream string, index int) ([]string, error) {
	t.Helper()
	var out []string
	for d, err := range s.After(context.Background(), session, stream, index) {
		if err != nil {
			return out, err
		}
		out = append(out, string(d))
	}
	return out, nil
}

func appendN(t *testing.T, s mcp.EventStore, session, stream string, from, to int) {
	t.Helper()
	for i := from; i < to; i++ {
		require.NoError(t, s.Append(context.Background(), session, stream, fmt.Appendf(nil, "%s-%d", stream, i)))
	}
}

// TestEventStoreMatchesSDKMemoryStore: the Redis store answers like the
// SDK's memory store for appends and replays within the retained history.
func TestClusterEventStoreMatchesSDKMemoryStore(t *testing.T) {
	stores := map[string]mcp.EventStore{
		"sdk":    mcp.NewMemoryEventStore(nil),
		"memory": newMemEvents(100),
		"redis":  testEvents(t, testConn(t), 100),
	}
	for name, s := range stores {
		t.Run(name, func(t *testing.T) { eventsContract(t, s) })
	}
}

// eventsContract is what every mcp.EventStore answers (ctx: no deadline).
func eventsContract(t *testing.T, s mcp.EventStore) {
	ctx := context.Background()
	require.NoError(t, s.Open(ctx, "S1", ""))
	require.NoError(t, s.Open(ctx, "S1", "p1"))
	got, err := after(t, s, "S1", "", -1)
	require.NoError(t, err)
	require.Empty(t, got, "nothing yet")
	appendN(t, s, "S1", "", 0, 3)
	appendN(t, s, "S1", "p1", 0, 2)
	appendN(t, s, "S2", "", 0, 1) // another session

	got, err = after(t, s, "S1", "", 0)
	require.NoError(t, err)
	require.Equal(t, []string{"-1", "-2"}, got)
	got, err = after(t, s, "S1", "p1", 0)
	require.NoError(t, err)
	require.Equal(t, []string{"p1-1"}, got)
	got, err = after(t, s, "S1", "", 2)
	require.NoError(t, err)
	require.Empty(t, got, "nothing after the last")
	got, err = after(t, s, "S2", "", -1)
	require.NoError(t, err)
	require.Equal(t, []string{"-0"}, got, "never another session's messages")

	require.NoError(t, s.SessionClosed(ctx, "S1"))
	_, err = after(t, s, "S1", "", 0)
	require.Error(t, err, "a closed session has no history")
}

func TestClusterEventStoreKeepsBoundedHistoryAndReportsPurged(t *testing.T) {
	c := testConn(t)
	s := testEvents(t, c, 5)
	ctx := context.Background()
	require.NoError(t, s.Open(ctx, "S", ""))
	appendN(t, s, "S", "", 0, 12)
	_, _ = after(t, s, "S", "", 11) // waits for the writes behind
	n, err := c.rdb.XLen(ctx, s.key("S")).Result()
	require.NoError(t, err)
	require.EqualValues(t, 5, n, "max_events_per_session entries kept")
	ttl, err := c.rdb.PTTL(ctx, s.key("S")).Result()
	require.NoError(t, err)
	require.Greater(t, ttl, 50*time.Second, "the log expires if never deleted")

	checkKeptHistory(t, s)
}

// checkKeptHistory checks a store keeping 5 messages per session that was
// given 12 on session S's standalone stream: replays within what is kept,
// purged before it, and a new standalone GET re-basing the indices.
func checkKeptHistory(t *testing.T, s mcp.EventStore) {
	t.Helper()
	got, err := after(t, s, "S", "", 7)
	require.NoError(t, err)
	require.Equal(t, []string{"-8", "-9", "-10", "-11"}, got)
	_, err = after(t, s, "S", "", 5)
	require.ErrorIs(t, err, mcp.ErrEventsPurged, "event 6 is gone: no partial replay")

	// A new standalone GET replays what is kept, and the store then numbers
	// its messages from there (as the SDK does).
	got, err = after(t, s, "S", "", -1)
	require.NoError(t, err)
	require.Equal(t, []string{"-7", "-8", "-9", "-10", "-11"}, got)
	appendN(t, s, "S", "", 12, 14) // the SDK calls these 5 and 6
	got, err = after(t, s, "S", "", 4)
	require.NoError(t, err)
	require.Equal(t, []string{"-12", "-13"}, got)
}

func TestClusterEventStoreFailedAppendIsAGapNotAShift(t *testing.T) {
	srv := clustertest.Start(t)
	c, err := newRedisConn(Redis{URL: srv.URL()}, "t:", fast.OpTimeout, discard)
	require.NoError(t, err)
	defer c.close()
	s := testEvents(t, c, 100)
	ctx := context.Background()
	appendN(t, s, "S", "", 0, 2)
	srv.Stop()
	_ = s.Append(ctx, "S", "", []byte("lost")) // queued; its write fails
	require.Eventually(t, func() bool { return c.err() != nil }, eventWait, 5*time.Millisecond)
	require.ErrorIs(t, s.Append(ctx, "S", "", []byte("lost too")), ErrUnavailable, "known down: fails at once")
	srv.Restart()
	require.NoError(t, c.probe(ctx))
	appendN(t, s, "S", "", 4, 6)
	got, err := after(t, s, "S", "", 3)
	require.NoError(t, err)
	require.Equal(t, []string{"-4", "-5"}, got, "after the gap, IDs still match")
	_, err = after(t, s, "S", "", 1)
	require.ErrorIs(t, err, mcp.ErrEventsPurged, "a replay across the lost message fails")
}

func TestClusterEventStoreSessionClosedDeletesKey(t *testing.T) {
	c := testConn(t)
	s := testEvents(t, c, 10)
	ctx := context.Background()
	appendN(t, s, "S", "", 0, 3)
	_, _ = after(t, s, "S", "", 2) // waits for the writes behind
	require.NoError(t, s.touch(ctx, []string{"S"}, 30*time.Second))
	ttl, _ := c.rdb.PTTL(ctx, s.key("S")).Result()
	require.LessOrEqual(t, ttl, 30*time.Second)
	require.NoError(t, s.SessionClosed(ctx, "S"))
	n, err := c.rdb.Exists(ctx, s.key("S")).Result()
	require.NoError(t, err)
	require.Zero(t, n)
}
