package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
)

func runner(rdb redis.UniversalClient) Runner {
	return func(ctx context.Context, s *redis.Script, keys []string, args ...any) (any, error) {
		return s.Run(ctx, rdb, keys, args...).Result()
	}
}

// Two stores (two nodes) on one Redis share one budget per key, with one
// script run per Take; the key expires once its budget is full again.
func TestRedisStoresShareOneBudget(t *testing.T) {
	t.Parallel()
	srv := clustertest.Start(t)
	opts, err := redis.ParseURL(srv.URL())
	require.NoError(t, err)
	rdb := redis.NewClient(opts)
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	a, b := NewRedis(runner(rdb), "p:"), NewRedis(runner(rdb), "p:")
	for i := range 10 {
		s := a
		if i%2 == 1 {
			s = b
		}
		wait, err := s.Take(ctx, "0.x:alice", 6*time.Second, 10)
		require.NoError(t, err)
		require.Zero(t, wait, "take %d", i+1)
	}
	wait, err := b.Take(ctx, "0.x:alice", 6*time.Second, 10)
	require.NoError(t, err)
	assert.Greater(t, wait, 5*time.Second, "the 11th is refused on either node")
	assert.LessOrEqual(t, wait, 6*time.Second)
	wait, err = a.Take(ctx, "0.x:bob", 6*time.Second, 10)
	require.NoError(t, err)
	assert.Zero(t, wait, "another key")

	ttl, err := rdb.PTTL(ctx, "p:rl:{0.x:alice}").Result()
	require.NoError(t, err)
	assert.Greater(t, ttl, 59*time.Second, "the key lives while its budget is not full again")
	assert.LessOrEqual(t, ttl, 61*time.Second)

	srv.Stop()
	_, err = a.Take(ctx, "0.x:alice", 6*time.Second, 10)
	assert.Error(t, err, "Redis down")
}

// On a Redis Cluster the key's hash tag puts the script on one shard.
func TestRedisStoreOnARedisCluster(t *testing.T) {
	t.Parallel()
	topo := clustertest.StartCluster(t, 3)
	s := NewRedis(runner(topo.Client(t)), topo.Prefix(t))
	ctx := context.Background()
	for _, key := range []string{"0.x:alice", "0.x:bob", "1.y:"} {
		wait, err := s.Take(ctx, key, time.Hour, 1)
		require.NoError(t, err)
		require.Zero(t, wait)
		wait, err = s.Take(ctx, key, time.Hour, 1)
		require.NoError(t, err)
		assert.Greater(t, wait, 59*time.Minute, "burst 1: the second is refused")
	}
}
