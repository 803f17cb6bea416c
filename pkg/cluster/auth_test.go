package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
)

// cluster.redis_username and redis_password reach Redis (here replacing a
// URL without user info); without them a Redis that requires a password
// refuses every command.
func TestClusterRedisPasswordAuthenticates(t *testing.T) {
	addr := clustertest.StartServer(t, "--requirepass", "s3cret")
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		r    Redis
		ok   bool
	}{
		{"password", Redis{URL: "redis://" + addr + "/0", Password: "s3cret"}, true},
		{"user and password", Redis{URL: "redis://" + addr + "/0", Username: "default", Password: "s3cret"}, true},
		{"none", Redis{URL: "redis://" + addr + "/0"}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := newRedisConn(tc.r, "t:", time.Second, discard)
			require.NoError(t, err)
			defer c.close()
			err = (&redisDirectory{c: c}).Claim(ctx, "s", "n", "", time.Minute)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, "NOAUTH")
			}
		})
	}
}
