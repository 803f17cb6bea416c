package cluster

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// redisConn is the shared Redis client of one node with its health: every
// operation is bounded by a timeout, and while Redis is known to be
// unreachable operations fail at once with ErrUnavailable (never falling
// back to anything) until probe succeeds again.
type redisConn struct {
	rdb     *redis.Client
	addr    string // host:port, for messages (no credentials)
	prefix  string // of every key
	timeout time.Duration
	log     *slog.Logger
	health  atomic.Pointer[health]
}

// health is Redis reachability as last observed.
type health struct {
	err   error     // non-nil while unreachable (wraps ErrUnavailable)
	since time.Time // when err became non-nil, or when Redis came back (zero: never down)
}

// newRedisConn parses a redis:// or rediss:// URL and builds the client. It
// does not connect: reachability is learned by the first operation or probe.
func newRedisConn(rawURL, prefix string, timeout time.Duration, log *slog.Logger) (*redisConn, error) {
	o, err := redis.ParseURL(rawURL)
	if err != nil {
		return nil, fmt.Errorf("cluster.redis_url: %w", err)
	}
	o.DialTimeout = timeout
	o.ReadTimeout = timeout
	o.WriteTimeout = timeout
	o.ContextTimeoutEnabled = true
	o.MaxRetries = 1    // one retry on a pooled connection broken by a Redis restart
	o.DialerRetries = 1 // no dial retries inside an operation: the heartbeat probes
	o.PoolTimeout = timeout
	quietRedis.Do(func() { redis.SetLogger(quiet{}) })
	c := &redisConn{rdb: redis.NewClient(o), addr: o.Addr, prefix: prefix, timeout: timeout, log: log}
	c.health.Store(&health{})
	return c, nil
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
// Redis is reachable now.
func (c *redisConn) probe(ctx context.Context) error {
	return c.run(ctx, func(ctx context.Context) error { return c.rdb.Ping(ctx).Err() })
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
	down := &health{err: fmt.Errorf("%w: Redis at %s: %v", ErrUnavailable, c.addr, cause), since: time.Now()}
	if !c.health.CompareAndSwap(h, down) {
		return c.err()
	}
	c.log.Warn("cluster: Redis unreachable; requests that need it get 503 until it returns", "redis", c.addr, "error", cause)
	return down.err
}

// isReply reports whether err is an answer from a working Redis (including
// redis.Nil), as opposed to a connection problem. LOADING (a restarted
// Redis reading its data) counts as unreachable.
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && !strings.HasPrefix(err.Error(), "LOADING")
}

func (c *redisConn) close() error { return c.rdb.Close() }

// holdScript sets KEYS[1] to ARGV[1] for ARGV[2] ms unless another value
// holds it: 1 if set, 0 if held by another (Claim).
var holdScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v and v ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`)

// lookupScript returns {owner} or {owner, url, principal} for session
// KEYS[1] (its value is ownerValue: the owner ID, then NUL and the
// principal if any), where url is the value of ARGV[1]..owner (the owner's
// liveness record), or false without a session record. (One round trip;
// standalone Redis only.)
var lookupScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if not v then return false end
local id, p = v, ''
local i = string.find(v, '\0', 1, true)
if i then id = string.sub(v, 1, i - 1); p = string.sub(v, i + 1) end
local url = redis.call('GET', ARGV[1] .. id)
if not url then return {id} end
return {id, url, p}`)

// releaseSessionScript deletes session record KEYS[1] if node ARGV[1]
// owns it (whatever its principal).
var releaseSessionScript = redis.NewScript(`
local v = redis.call('GET', KEYS[1])
if v and (v == ARGV[1] or string.sub(v, 1, #ARGV[1] + 1) == ARGV[1] .. '\0') then return redis.call('DEL', KEYS[1]) end
return 0`)

// redisDirectory is the Directory on Redis: PREFIX node:ID -> URL (TTL),
// PREFIX nodes (set of IDs ever announced, pruned lazily) and
// PREFIX sess:SESSION -> ownerValue(owner ID, principal) (TTL: SessionTTL,
// long; valid only while the owner's node record lives).
type redisDirectory struct{ c *redisConn }

func (d *redisDirectory) nodeKey(id string) string { return d.c.prefix + "node:" + id }
func (d *redisDirectory) sessKey(id string) string { return d.c.prefix + "sess:" + id }
func (d *redisDirectory) nodesKey() string         { return d.c.prefix + "nodes" }

func (d *redisDirectory) Announce(ctx context.Context, n NodeInfo, ttl time.Duration) (missing bool, err error) {
	err = d.c.do(ctx, func(ctx context.Context) error {
		var prev *redis.StatusCmd
		cmds, err := d.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			prev = p.SetArgs(ctx, d.nodeKey(n.ID), n.URL, redis.SetArgs{TTL: ttl, Get: true}) // GET: the old value, redis.Nil if none
			p.SAdd(ctx, d.nodesKey(), n.ID)
			return nil
		})
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		for _, cmd := range cmds {
			if err := cmd.Err(); err != nil && !errors.Is(err, redis.Nil) {
				return err
			}
		}
		missing = errors.Is(prev.Err(), redis.Nil)
		return nil
	})
	return missing, err
}

func (d *redisDirectory) Withdraw(ctx context.Context, id string) error {
	return d.c.do(ctx, func(ctx context.Context) error {
		_, err := d.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
			p.Del(ctx, d.nodeKey(id))
			p.SRem(ctx, d.nodesKey(), id)
			return nil
		})
		return err
	})
}

func (d *redisDirectory) Node(ctx context.Context, id string) (NodeInfo, error) {
	var u string
	err := d.c.do(ctx, func(ctx context.Context) (err error) {
		u, err = d.c.rdb.Get(ctx, d.nodeKey(id)).Result()
		return err
	})
	if errors.Is(err, redis.Nil) {
		return NodeInfo{}, ErrNotFound
	}
	return NodeInfo{ID: id, URL: u}, err
}

func (d *redisDirectory) Nodes(ctx context.Context) ([]NodeInfo, error) {
	var out []NodeInfo
	err := d.c.do(ctx, func(ctx context.Context) error {
		ids, err := d.c.rdb.SMembers(ctx, d.nodesKey()).Result()
		if err != nil || len(ids) == 0 {
			return err
		}
		keys := make([]string, len(ids))
		for i, id := range ids {
			keys[i] = d.nodeKey(id)
		}
		urls, err := d.c.rdb.MGet(ctx, keys...).Result()
		if err != nil {
			return err
		}
		var dead []any
		for i, u := range urls {
			if s, ok := u.(string); ok {
				out = append(out, NodeInfo{ID: ids[i], URL: s})
			} else {
				dead = append(dead, ids[i])
			}
		}
		if len(dead) > 0 {
			return d.c.rdb.SRem(ctx, d.nodesKey(), dead...).Err()
		}
		return nil
	})
	return out, err
}

func (d *redisDirectory) Claim(ctx context.Context, session, node, principal string, ttl time.Duration) error {
	var ok int64
	err := d.c.do(ctx, func(ctx context.Context) (err error) {
		ok, err = holdScript.Run(ctx, d.c.rdb, []string{d.sessKey(session)}, ownerValue(node, principal), ttl.Milliseconds()).Int64()
		return err
	})
	if err == nil && ok == 0 {
		return ErrConflict
	}
	return err
}

// refreshBatch bounds one pipeline of Refresh.
const refreshBatch = 1000

func (d *redisDirectory) Refresh(ctx context.Context, node string, sessions map[string]string, ttl time.Duration) error {
	ids := make([]string, 0, len(sessions))
	for id := range sessions {
		ids = append(ids, id)
	}
	for len(ids) > 0 {
		batch := ids[:min(len(ids), refreshBatch)]
		ids = ids[len(batch):]
		err := d.c.do(ctx, func(ctx context.Context) error {
			_, err := d.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
				for _, id := range batch {
					p.Set(ctx, d.sessKey(id), ownerValue(node, sessions[id]), ttl)
				}
				return nil
			})
			return err
		})
		if err != nil {
			return err
		}
	}
	return nil
}

func (d *redisDirectory) Lookup(ctx context.Context, session string) (NodeInfo, string, error) {
	var res []any
	err := d.c.do(ctx, func(ctx context.Context) (err error) {
		res, err = lookupScript.Run(ctx, d.c.rdb, []string{d.sessKey(session)}, d.c.prefix+"node:").Slice()
		return err
	})
	if errors.Is(err, redis.Nil) || (err == nil && len(res) < 2) {
		return NodeInfo{}, "", ErrNotFound
	}
	if err != nil {
		return NodeInfo{}, "", err
	}
	id, _ := res[0].(string)
	u, _ := res[1].(string)
	var p string
	if len(res) > 2 {
		p, _ = res[2].(string)
	}
	return NodeInfo{ID: id, URL: u}, p, nil
}

func (d *redisDirectory) Release(ctx context.Context, session, node string) error {
	return d.c.do(ctx, func(ctx context.Context) error {
		return releaseSessionScript.Run(ctx, d.c.rdb, []string{d.sessKey(session)}, node).Err()
	})
}
