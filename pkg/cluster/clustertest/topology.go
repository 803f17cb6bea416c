package clustertest

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is a Redis topology to run vmcp on: exactly one of URL, Cluster
// and SentinelMaster (with SentinelAddrs) is set, as in cluster.Redis and
// config.Cluster.
type Redis struct {
	Name           string   // "redis", "cluster" or "sentinel" (subtest names)
	URL            string   // one Redis
	Cluster        []string // seed nodes of a Redis Cluster
	SentinelMaster string   // a Sentinel-managed primary's name
	SentinelAddrs  []string // and its sentinels
	// Password is the Redis servers' requirepass, SentinelPassword the
	// sentinels' own ("": none).
	Password, SentinelPassword string
	// CAFile and Pool: the Redis accepts only TLS, with a certificate
	// that CA signed (StartTLS); "" and nil: plain TCP.
	CAFile string
	Pool   *x509.CertPool
}

// Standalone is the test Redis of URL (shared or private) as a topology.
func Standalone(t testing.TB) Redis { return Redis{Name: "redis", URL: URL(t)} }

// Sharded reports whether r is a Redis Cluster (keys carry hash tags).
func (r Redis) Sharded() bool { return len(r.Cluster) > 0 }

// Client returns a go-redis client for r (a ClusterClient on a Cluster, a
// FailoverClient on Sentinel), closed when the test ends.
func (r Redis) Client(t testing.TB) redis.UniversalClient {
	t.Helper()
	rdb, err := r.client()
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	t.Cleanup(func() { _ = rdb.Close() })
	return rdb
}

func (r Redis) client() (redis.UniversalClient, error) {
	if r.URL != "" {
		o, err := redis.ParseURL(r.URL)
		if err != nil {
			return nil, err
		}
		if r.Pool != nil {
			o.TLSConfig = &tls.Config{RootCAs: r.Pool, MinVersion: tls.VersionTLS12}
		}
		return redis.NewClient(o), nil
	}
	if len(r.Cluster) > 0 {
		return redis.NewClusterClient(&redis.ClusterOptions{Addrs: r.Cluster}), nil
	}
	return redis.NewFailoverClient(&redis.FailoverOptions{MasterName: r.SentinelMaster, SentinelAddrs: r.SentinelAddrs,
		Password: r.Password, SentinelPassword: r.SentinelPassword}), nil
}

// Prefix returns a key prefix unique to this test and deletes every key
// under it when the test ends.
func (r Redis) Prefix(t testing.TB) string {
	t.Helper()
	p := "vmcptest:" + strings.ToLower(randText()) + ":"
	t.Cleanup(func() {
		rdb, err := r.client()
		if err != nil {
			return
		}
		defer rdb.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = DeleteAll(ctx, rdb, p)
	})
	return p
}

// AllKeys lists the keys starting with prefix: a SCAN of every primary on
// a Redis Cluster (each holds its own slots), else of the one Redis.
func AllKeys(ctx context.Context, rdb redis.UniversalClient, prefix string) ([]string, error) {
	cc, ok := rdb.(*redis.ClusterClient)
	if !ok {
		return scan(ctx, rdb, prefix)
	}
	var (
		mu  sync.Mutex
		out []string
	)
	err := cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { // concurrently
		keys, err := scan(ctx, m, prefix)
		mu.Lock()
		defer mu.Unlock()
		out = append(out, keys...)
		return err
	})
	return out, err
}

func scan(ctx context.Context, rdb redis.UniversalClient, prefix string) ([]string, error) {
	var out []string
	iter := rdb.Scan(ctx, 0, prefix+"*", 500).Iterator()
	for iter.Next(ctx) {
		out = append(out, iter.Val())
	}
	return out, iter.Err()
}

// DeleteAll deletes every key starting with prefix, one key at a time
// (a multi-key DEL would cross slots on a Redis Cluster).
func DeleteAll(ctx context.Context, rdb redis.UniversalClient, prefix string) error {
	keys, err := AllKeys(ctx, rdb, prefix)
	if err != nil || len(keys) == 0 {
		return err
	}
	_, err = rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for _, k := range keys {
			p.Del(ctx, k)
		}
		return nil
	})
	return err
}

// Cutter dials Redis for one vmcp node (cluster.Redis.Dialer) and can cut
// it off: every connection it made is closed and new dials are refused,
// as if the node were partitioned or dead. It works on every topology
// (a TCP proxy cannot stand in for a Cluster's or Sentinel's addresses).
type Cutter struct {
	mu    sync.Mutex
	conns []net.Conn
	cut   bool
}

// Dial is the node's dialer.
func (c *Cutter) Dial(ctx context.Context, network, addr string) (net.Conn, error) {
	c.mu.Lock()
	cut := c.cut
	c.mu.Unlock()
	if cut {
		return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("clustertest: cut off Redis")}
	}
	conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cut {
		_ = conn.Close()
		return nil, &net.OpError{Op: "dial", Net: network, Err: errors.New("clustertest: cut off Redis")}
	}
	c.conns = append(c.conns, conn)
	return conn, nil
}

// Cut closes every connection and refuses new ones; idempotent.
func (c *Cutter) Cut() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.cut = true
	for _, conn := range c.conns {
		_ = conn.Close()
	}
	c.conns = nil
}
