package cluster

import (
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
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

// redis_url naming the ACL user with redis_password from the environment
// (redis://vmcp@redis:6379/0 and ${REDIS_PASSWORD}): the URL's user was
// dropped, so vmcp authenticated as the default user. Each of
// redis_username and redis_password replaces only the URL's own.
func TestRedisURLUserDroppedWithRedisPassword(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ url, user, pw, wantUser, wantPW string }{
		{"redis://vmcp@h:6379/0", "", "cfg-pw", "vmcp", "cfg-pw"},
		{"redis://vmcp:url-pw@h:6379/0", "ops", "", "ops", "url-pw"},
		{"redis://vmcp:url-pw@h:6379/0", "", "", "vmcp", "url-pw"},
		{"redis://vmcp:url-pw@h:6379/0", "ops", "cfg-pw", "ops", "cfg-pw"},
	} {
		rdb, _, err := newClient(Redis{URL: tt.url, Username: tt.user, Password: tt.pw}, time.Second)
		require.NoError(t, err)
		o := rdb.(*redis.Client).Options()
		assert.Equal(t, tt.wantUser, o.Username, tt.url)
		assert.Equal(t, tt.wantPW, o.Password, tt.url)
		_ = rdb.Close()
	}
}
