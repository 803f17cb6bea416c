package cluster

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
)

var incr = redis.NewScript(`return redis.call('INCR', KEYS[1])`)

// Script runs on the cluster's Redis (loading the script once) and fails
// at once with ErrUnavailable while Redis is known down; a memory cluster
// has none.
func TestScriptRunsOnTheClustersRedis(t *testing.T) {
	t.Parallel()
	mem, err := New(Options{Timing: fast})
	require.NoError(t, err)
	defer mem.Close()
	assert.False(t, mem.Shared())
	assert.Empty(t, mem.KeyPrefix())
	_, err = mem.Script(context.Background(), incr, []string{"k"})
	require.Error(t, err)

	srv := clustertest.Start(t)
	c := testCluster(t, srv.URL(), "s:", "n1", "http://127.0.0.1:1")
	assert.True(t, c.Shared())
	assert.Equal(t, "s:", c.KeyPrefix())
	for want := int64(1); want <= 2; want++ {
		got, err := c.Script(context.Background(), incr, []string{"s:k"})
		require.NoError(t, err)
		assert.Equal(t, want, got)
	}
	srv.Stop()
	_, err = c.Script(context.Background(), incr, []string{"s:k"})
	require.Error(t, err)
	_, err = c.Script(context.Background(), incr, []string{"s:k"})
	require.ErrorIs(t, err, ErrUnavailable, "known down: fails at once")
}
