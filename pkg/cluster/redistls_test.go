package cluster

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
)

// redis_tls was accepted but never tried against a TLS Redis: a Redis
// whose certificate is signed by the operator's own CA is reached with
// that CA (redis_tls_ca_file), and refused without it or without TLS.
func TestRedisTLSWithItsOwnCAWasNeverTried(t *testing.T) {
	t.Parallel()
	srv := clustertest.StartTLS(t)
	cases := []struct {
		name string
		r    Redis
		ok   bool
	}{
		{"the CA given", Redis{URL: "redis://" + srv.Addr + "/0", TLSRoots: srv.Pool}, true},
		{"rediss URL and the CA", Redis{URL: "rediss://" + srv.Addr + "/0", TLSRoots: srv.Pool}, true},
		{"TLS without the CA", Redis{URL: "redis://" + srv.Addr + "/0", TLS: true}, false},
		{"no TLS", Redis{URL: "redis://" + srv.Addr + "/0"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := pingOnce(t, c.r)
			if c.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}

// A Sentinel set that requires a password of its clients: the password
// goes to the sentinels (redis_sentinel.password), not only to the
// servers, or the primary is never found.
func TestSentinelPasswordReachesTheSentinels(t *testing.T) {
	t.Parallel()
	addr := clustertest.StartSentinelWithPassword(t, "s3cret")
	with := Redis{Sentinel: &Sentinel{Master: clustertest.SentinelMaster, Addrs: []string{addr}, Password: "s3cret"}}
	require.NoError(t, pingOnce(t, with))
	without := Redis{Sentinel: &Sentinel{Master: clustertest.SentinelMaster, Addrs: []string{addr}}}
	require.Error(t, pingOnce(t, without))
}

// pingOnce builds r's client and pings through it once.
func pingOnce(t *testing.T, r Redis) error {
	t.Helper()
	rdb, _, err := newClient(r, 5*time.Second)
	require.NoError(t, err)
	defer rdb.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return rdb.Ping(ctx).Err()
}
