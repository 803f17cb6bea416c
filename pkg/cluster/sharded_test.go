package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
)

// On a Redis Cluster of three primaries the directory and the event store
// answer as on one Redis. Before hash tags and the sharded lookup, Lookup's
// script read the owner's node record in another slot (refused by a
// Cluster: a script may touch only its own slot's keys), and Nodes' MGET
// crossed slots.
func TestClusterOnRedisClusterEveryOperationStaysInOneSlot(t *testing.T) {
	topo := clustertest.StartCluster(t, 3)
	conn := func(t *testing.T) *redisConn {
		c, err := newRedisConn(Redis{Cluster: topo.Cluster}, topo.Prefix(t), time.Second, discard)
		require.NoError(t, err)
		t.Cleanup(func() { _ = c.close() })
		return c
	}
	for name, f := range map[string]func(*testing.T, Directory){
		"basics": contractBasics, "principal": contractRecordsCarryThePrincipal,
	} {
		t.Run(name, func(t *testing.T) { f(t, &redisDirectory{c: conn(t)}) })
	}
	for name, f := range map[string]func(*testing.T, Directory, func(time.Duration)){
		"expiry": contractRecordsExpireAndRefreshRecreates, "announce": contractAnnounceReportsAMissingNodeRecord,
	} {
		t.Run(name, func(t *testing.T) {
			c := conn(t)
			f(t, &redisDirectory{c: c}, func(d time.Duration) { elapseRedis(t, c, d) })
		})
	}
	t.Run("events", func(t *testing.T) { eventsContract(t, testEvents(t, conn(t), 100)) })
	t.Run("slots", func(t *testing.T) { sessionSlots(t, conn(t)) })
}

// sessionSlots: a session's record and event stream share a slot, and
// sessions spread over every primary.
func sessionSlots(t *testing.T, c *redisConn) {
	ctx := context.Background()
	cc := c.rdb.(*redis.ClusterClient)
	d := &redisDirectory{c: c}
	ev := testEvents(t, c, 10)
	announce(t, d, NodeInfo{ID: "a", URL: "http://127.0.0.1:1"}, time.Minute)
	primaries := map[string]bool{}
	for i := range 30 {
		s := fmt.Sprintf("s%d", i)
		require.NoError(t, d.Claim(ctx, s, "a", "", time.Minute))
		require.NoError(t, ev.Append(ctx, s, "", []byte("m")))
		_, err := after(t, ev, s, "", -1) // waits for the write behind
		require.NoError(t, err)
		slot, err := cc.ClusterKeySlot(ctx, c.keys.sess(s)).Result()
		require.NoError(t, err)
		evSlot, err := cc.ClusterKeySlot(ctx, c.keys.events(s)).Result()
		require.NoError(t, err)
		require.Equal(t, slot, evSlot, "session %s's keys share a slot", s)
		m, err := cc.MasterForKey(ctx, c.keys.sess(s))
		require.NoError(t, err)
		primaries[m.Options().Addr] = true
		n, err := cc.Exists(ctx, c.keys.sess(s), c.keys.events(s)).Result() // one multi-key command: one slot
		require.NoError(t, err)
		require.EqualValues(t, 2, n)
	}
	require.Len(t, primaries, 3, "sessions spread over every primary")
	require.NoError(t, c.probe(ctx), "the probe pings every primary")
}
