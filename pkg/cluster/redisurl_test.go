package cluster

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A redis_url with a typo (here its port) whose user info carries the
// password: the start error quoted the whole URL, password and all, into
// the operator's logs. It still names the key and the mistake.
func TestRedisURLTypoPrintedThePassword(t *testing.T) {
	t.Parallel()
	for _, u := range []string{"redis://:s3cret-pw@host:badport/0", "redis://user:s3cret-pw@[::1/0", "rediss://:s3cret-pw@host:6379/x"} {
		_, err := newRedisConn(Redis{URL: u}, "t:", time.Second, discard)
		require.Error(t, err, u)
		assert.NotContains(t, err.Error(), "s3cret-pw")
		assert.Contains(t, err.Error(), "cluster.redis_url")
	}
	_, err := newRedisConn(Redis{URL: "redis://:pw@host:badport/0"}, "t:", time.Second, discard)
	assert.Contains(t, err.Error(), "badport", "the mistake is named")
}
