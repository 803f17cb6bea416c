package cluster

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis names the Redis that holds the cluster's state: exactly one of
// URL (one Redis), Cluster (a Redis Cluster's seed nodes) and Sentinel (a
// Sentinel-managed primary). The clients are go-redis's own: Client,
// ClusterClient (slot routing, MOVED/ASK) and FailoverClient (asks the
// sentinels for the primary, follows +switch-master).
type Redis struct {
	URL      string    // redis:// or rediss://
	Cluster  []string  // host:port of some Redis Cluster nodes
	Sentinel *Sentinel // a primary found through Redis Sentinel
	// Username and Password authenticate to the Redis servers (not to the
	// sentinels); each, set, replaces the URL's own (a URL's user with
	// Password from the environment: that user and Password).
	Username, Password string
	TLS                bool // TLS to the Redis servers (a rediss:// URL implies it)
	// TLSRoots, if set, are the CAs that sign the Redis servers'
	// certificates (implies TLS); nil: the system's roots.
	TLSRoots *x509.CertPool
	// Dialer, if set, opens every connection to Redis (tests cut a node
	// off Redis with it); nil: a plain TCP dialer.
	Dialer Dialer
}

// Dialer opens a connection to addr ("tcp", host:port), as net.Dialer's
// DialContext.
type Dialer = func(ctx context.Context, network, addr string) (net.Conn, error)

// Sentinel names a Sentinel-managed primary.
type Sentinel struct {
	Master string   // the primary's name in the sentinels' configuration
	Addrs  []string // host:port of the sentinels
	// Username and Password authenticate to the sentinels themselves.
	Username, Password string
}

// Enabled reports whether r names a Redis (else: memory, one node).
func (r Redis) Enabled() bool { return r.URL != "" || len(r.Cluster) > 0 || r.Sentinel != nil }

// Sharded reports whether keys are spread over hash slots (Redis Cluster):
// then keys carry hash tags (keys.go) and no command or script spans two
// sessions or nodes.
func (r Redis) Sharded() bool { return len(r.Cluster) > 0 }

// redisConn is the shared Redis client of one node with its health: every
// operation is bounded by a timeout, and while Redis is known to be
// unreachable operations fail at once with ErrUnavailable (never falling
// back to anything) until probe succeeds again.
type redisConn struct {
	rdb     redis.UniversalClient
	addr    string // what Redis is, for messages (no credentials)
	plain   bool   // no TLS configured (an EOF then may mean a TLS-only Redis)
	keys    keyspace
	timeout time.Duration
	log     *slog.Logger
	health  atomic.Pointer[health]
}

// health is Redis reachability as last observed.
type health struct {
	err   error     // non-nil while unreachable (wraps ErrUnavailable)
	since time.Time // when err became non-nil, or when Redis came back (zero: never down)
}

// newRedisConn builds the client for r (parsing a URL; an error names the
// config key). It does not connect: reachability is learned by the first
// operation or probe.
func newRedisConn(r Redis, prefix string, timeout time.Duration, log *slog.Logger) (*redisConn, error) {
	rdb, addr, err := newClient(r, timeout)
	if err != nil {
		return nil, err
	}
	quietRedis.Do(func() { redis.SetLogger(quiet{}) })
	plain := !r.TLS && r.TLSRoots == nil && !strings.HasPrefix(r.URL, "rediss://")
	c := &redisConn{rdb: rdb, addr: addr, plain: plain, keys: keyspace{prefix: prefix, tagged: r.Sharded()}, timeout: timeout, log: log}
	c.health.Store(&health{})
	return c, nil
}

// newClient builds the go-redis client for r and says what it connects to.
func newClient(r Redis, timeout time.Duration) (redis.UniversalClient, string, error) {
	u := &redis.UniversalOptions{
		DialTimeout: timeout, ReadTimeout: timeout, WriteTimeout: timeout, PoolTimeout: timeout,
		ContextTimeoutEnabled: true,
		MaxRetries:            1, // one retry on a pooled connection broken by a Redis restart
		DialerRetries:         1, // no dial retries inside an operation: the heartbeat probes
		Username:              r.Username, Password: r.Password, Dialer: r.Dialer,
	}
	if r.TLS || r.TLSRoots != nil {
		u.TLSConfig = &tls.Config{MinVersion: tls.VersionTLS12, RootCAs: r.TLSRoots} // server name: the host dialed
	}
	var what string
	switch {
	case r.URL != "":
		o, err := redis.ParseURL(r.URL)
		if err != nil {
			return nil, "", fmt.Errorf("cluster.redis_url: %w", withoutURL(err))
		}
		u.Addrs, u.DB, u.ClientName = []string{o.Addr}, o.DB, o.ClientName
		u.Username, u.Password = cmp.Or(u.Username, o.Username), cmp.Or(u.Password, o.Password) // each replaces the URL's own
		if o.TLSConfig != nil && u.TLSConfig == nil {
			u.TLSConfig = o.TLSConfig
		} else if o.TLSConfig != nil {
			u.TLSConfig.ServerName = o.TLSConfig.ServerName
		}
		what = "Redis at " + o.Addr
	case len(r.Cluster) > 0:
		u.Addrs, u.IsClusterMode = r.Cluster, true
		what = "Redis Cluster at " + strings.Join(r.Cluster, ",")
	case r.Sentinel != nil:
		u.Addrs, u.MasterName = r.Sentinel.Addrs, r.Sentinel.Master
		u.SentinelUsername, u.SentinelPassword = r.Sentinel.Username, r.Sentinel.Password
		what = fmt.Sprintf("Redis primary %q of the sentinels at %s", r.Sentinel.Master, strings.Join(r.Sentinel.Addrs, ","))
	default:
		return nil, "", errors.New("cluster: no Redis named")
	}
	if u.Dialer != nil && u.TLSConfig != nil { // go-redis negotiates TLS only on its own dialer
		u.Dialer = tlsOver(u.Dialer, u.TLSConfig)
	}
	return redis.NewUniversalClient(u), what, nil
}

// tlsOver is dial with a TLS handshake on every connection it opens (the
// server name, unless cfg sets one: the host dialed), as go-redis's own
// dialer does when no Dialer is given.
func tlsOver(dial Dialer, cfg *tls.Config) Dialer {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		raw, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		c := cfg.Clone()
		if c.ServerName == "" {
			c.ServerName, _, _ = net.SplitHostPort(addr)
		}
		conn := tls.Client(raw, c)
		if err := conn.HandshakeContext(ctx); err != nil {
			_ = raw.Close()
			return nil, err
		}
		return conn, nil
	}
}

// withoutURL is err without the URL a parse error quotes (its user info
// may hold the password): "parse: " and the mistake.
func withoutURL(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return fmt.Errorf("%s: %w", ue.Op, ue.Err)
	}
	return err
}

// quietRedis silences go-redis's own logging (process-wide): reachability
// changes are logged by redisConn, once per change.
var quietRedis sync.Once

type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

// err returns the unavailability error while Redis is unreachable, else nil.
func (c *redisConn) err() error { return c.health.Load().err }

// upSince is when Redis was last seen coming back (zero if never down).
func (c *redisConn) upSince() time.Time { return c.health.Load().since }

// do runs f with a timeout, unless Redis is known to be down.
func (c *redisConn) do(ctx context.Context, f func(context.Context) error) error {
	if err := c.err(); err != nil {
		return err
	}
	return c.run(ctx, f)
}

// run runs f with a timeout and records what it says about reachability.
func (c *redisConn) run(ctx context.Context, f func(context.Context) error) error {
	octx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	err := f(octx)
	switch {
	case err == nil || isReply(err):
		c.markUp()
		return err
	case ctx.Err() != nil:
		return ctx.Err() // our caller gave up: this says nothing about Redis
	default:
		return c.markDown(err)
	}
}

// probe pings Redis even while it is known to be down; it reports whether
// Redis is reachable now. On a Redis Cluster it pings every primary (a
// failed-over shard is down until its slots have a primary again).
func (c *redisConn) probe(ctx context.Context) error {
	return c.run(ctx, func(ctx context.Context) error {
		if cc, ok := c.rdb.(*redis.ClusterClient); ok {
			return cc.ForEachMaster(ctx, func(ctx context.Context, m *redis.Client) error { return m.Ping(ctx).Err() })
		}
		return c.rdb.Ping(ctx).Err()
	})
}

func (c *redisConn) markUp() {
	if h := c.health.Load(); h.err != nil && c.health.CompareAndSwap(h, &health{since: time.Now()}) {
		c.log.Info("cluster: Redis reachable again", "redis", c.addr, "down_for", time.Since(h.since).Round(time.Millisecond))
	}
}

func (c *redisConn) markDown(cause error) error {
	h := c.health.Load()
	if h.err != nil {
		return h.err
	}
	why := c.explain(cause)
	down := &health{err: fmt.Errorf("%w: %s: %s", ErrUnavailable, c.addr, why), since: time.Now()}
	if !c.health.CompareAndSwap(h, down) {
		return c.err()
	}
	c.log.Warn("cluster: Redis unreachable; requests that need it get 503 until it returns", "redis", c.addr, "error", why)
	return down.err
}

// explain is cause as a message; a connection closed by a Redis reached
// without TLS says what a TLS-only Redis does to a plain connection.
func (c *redisConn) explain(cause error) string {
	if c.plain && (errors.Is(cause, io.EOF) || errors.Is(cause, syscall.ECONNRESET)) {
		return cause.Error() + " (Redis closed the connection; a Redis that accepts only TLS closes plain ones: then set cluster.redis_tls)"
	}
	return cause.Error()
}

// isReply reports whether err is an answer from a working Redis (including
// redis.Nil), as opposed to a connection problem. A Redis that cannot
// serve yet counts as unreachable: LOADING (a restarted Redis reading its
// data), READONLY (a demoted primary, during a failover), MASTERDOWN,
// CLUSTERDOWN and TRYAGAIN (a shard without a primary, slots moving).
func isReply(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	return !redis.IsLoadingError(err) && !redis.IsReadOnlyError(err) && !redis.IsMasterDownError(err) &&
		!redis.IsClusterDownError(err) && !redis.IsTryAgainError(err)
}

func (c *redisConn) close() error { return c.rdb.Close() }
