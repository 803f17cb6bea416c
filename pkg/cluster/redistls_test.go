package cluster

import (
	"bytes"
	"context"
	"log/slog"
	"net"
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

// A Sentinel set whose sentinels and servers all require passwords (one
// primary, one replica, three sentinels): the sentinels' own password
// (redis_sentinel.password) goes to the sentinels and redis_password to
// the servers; either one missing fails, and no error quotes a password.
func TestSentinelPasswordReachesTheSentinels(t *testing.T) {
	t.Parallel()
	auth := clustertest.SentinelAuth{Password: "srv-s3cret-pw", SentinelPassword: "snt-s3cret-pw"}
	topo := clustertest.StartSentinelsWith(t, auth).Redis()
	sentinel := func(pw string) *Sentinel {
		return &Sentinel{Master: topo.SentinelMaster, Addrs: topo.SentinelAddrs, Password: pw}
	}
	require.NoError(t, pingOnce(t, Redis{Sentinel: sentinel(auth.SentinelPassword), Password: auth.Password}))
	for name, r := range map[string]Redis{
		"no sentinel password": {Sentinel: sentinel(""), Password: auth.Password},
		"no server password":   {Sentinel: sentinel(auth.SentinelPassword)},
		"swapped":              {Sentinel: sentinel(auth.Password), Password: auth.SentinelPassword},
	} {
		err := pingOnce(t, r)
		require.Error(t, err, name)
		require.NotContains(t, err.Error(), "s3cret", name)
	}
}

// A Redis that accepts only TLS closes a plain connection: the node said
// only "EOF". Now its error (Check, /status, the log) says to set
// cluster.redis_tls, and quotes no password.
func TestPlainTCPToATLSOnlyRedisSaidOnlyEOF(t *testing.T) {
	t.Parallel()
	srv := clustertest.StartTLS(t)
	var logs bytes.Buffer
	c, err := New(Options{Redis: Redis{URL: "redis://" + srv.Addr + "/0", Username: "vmcp", Password: "pw-s3cret"},
		KeyPrefix: "vmcptest:plain:", AdvertiseURL: "http://127.0.0.1:1", MaxEventsPerSession: 10,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Close() })
	err = c.Check() // New's first heartbeat found Redis unreachable
	require.ErrorIs(t, err, ErrUnavailable)
	require.Contains(t, err.Error(), "set cluster.redis_tls")
	require.Contains(t, c.Status().Redis, "set cluster.redis_tls")
	require.Contains(t, logs.String(), "set cluster.redis_tls")
	for _, s := range []string{err.Error(), c.Status().Redis, logs.String()} {
		require.NotContains(t, s, "pw-s3cret")
	}
}

// go-redis negotiates TLS only on its own dialer: with a Dialer given
// (the tests' Cutter), redis_tls went plain and a TLS-only Redis was never
// reached. The TLS handshake now runs over the given dialer.
func TestRedisTLSThroughADialerWentPlain(t *testing.T) {
	t.Parallel()
	srv := clustertest.StartTLS(t)
	dial := (&net.Dialer{}).DialContext
	require.NoError(t, pingOnce(t, Redis{URL: "redis://" + srv.Addr + "/0", TLSRoots: srv.Pool, Dialer: dial}))
	require.NoError(t, pingOnce(t, Redis{URL: "rediss://" + srv.Addr + "/0", TLSRoots: srv.Pool, Dialer: dial}))
	require.Error(t, pingOnce(t, Redis{URL: "redis://" + srv.Addr + "/0", TLS: true, Dialer: dial}), "the CA is still checked")
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
