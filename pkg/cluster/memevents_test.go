package cluster

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestLegacySessionEventStoreGrewWithEveryPOSTStream: a memory-mode node
// kept a record for every POST stream of a session until the session ended
// (the SDK's MemoryEventStore: heap 5 → 83 MB over three minutes of four
// sessions' calls); it now keeps max_events_per_session streams and
// messages, and a resume into a forgotten stream fails as purged.
func TestLegacySessionEventStoreGrewWithEveryPOSTStream(t *testing.T) {
	t.Parallel()
	c, err := New(Options{MaxEventsPerSession: 8})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, c.Close()) })
	s, ctx := c.EventStore(), context.Background()
	for i := range 1000 {
		stream := fmt.Sprint("post-", i)
		require.NoError(t, s.Open(ctx, "S", stream))
		require.NoError(t, s.Append(ctx, "S", stream, nil)) // the SDK's priming event
		require.NoError(t, s.Append(ctx, "S", stream, fmt.Appendf(nil, "result-%d", i)))
	}
	_, err = after(t, s, "S", "post-0", 0)
	require.ErrorIs(t, err, mcp.ErrEventsPurged, "the first stream is forgotten")
	got, err := after(t, s, "S", "post-999", 0)
	require.NoError(t, err)
	require.Equal(t, []string{"result-999"}, got, "the newest stream replays")
	streams, messages := c.events.EventStore.(*memEvents).held("S")
	require.LessOrEqual(t, streams, 8)
	require.LessOrEqual(t, messages, 8)
}

func TestMemoryEventStoreKeepsBoundedHistoryAndReportsPurged(t *testing.T) {
	t.Parallel()
	s, ctx := newMemEvents(5), context.Background()
	require.NoError(t, s.Open(ctx, "S", ""))
	appendN(t, s, "S", "", 0, 12)
	checkKeptHistory(t, s)
}

func TestMemoryEventStoreDropsTheSessionsOldestMessageAcrossStreams(t *testing.T) {
	t.Parallel()
	s, ctx := newMemEvents(3), context.Background()
	appendN(t, s, "S", "a", 0, 2)
	appendN(t, s, "S", "b", 0, 2) // a-0 goes: 4 > 3
	appendN(t, s, "T", "a", 0, 3) // another session's budget
	got, err := after(t, s, "S", "a", 0)
	require.NoError(t, err)
	require.Equal(t, []string{"a-1"}, got)
	got, err = after(t, s, "T", "a", -1)
	require.NoError(t, err)
	require.Equal(t, []string{"a-0", "a-1", "a-2"}, got, "never another session's messages")
	require.NoError(t, s.SessionClosed(ctx, "S"))
	streams, messages := s.held("S")
	require.Zero(t, streams+messages)
}

func TestMemoryEventStoreConcurrentSessions(t *testing.T) {
	t.Parallel()
	s, ctx := newMemEvents(16), context.Background()
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			session := fmt.Sprint("S", w)
			for i := range 200 {
				stream := fmt.Sprint(i % 20)
				_ = s.Append(ctx, session, stream, []byte("x"))
				for _, err := range s.After(ctx, session, stream, -1) {
					require.NoError(t, err)
				}
			}
			streams, messages := s.held(session)
			require.LessOrEqual(t, streams, 16)
			require.LessOrEqual(t, messages, 16)
			require.NoError(t, s.SessionClosed(ctx, session))
		})
	}
	wg.Wait()
}
