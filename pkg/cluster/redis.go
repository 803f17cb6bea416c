package cluster

import (
	"context"
	"errors"
	"time"

	"github.com/redis/go-redis/v9"
)

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
// one Redis only: on a Redis Cluster the two keys are in different slots,
// lookupSharded.)
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

// redisDirectory is the Directory on Redis (keys: keyspace): node
// records with a TTL, the set of node IDs, and session records (TTL
// SessionTTL, long; valid only while the owner's node record lives).
type redisDirectory struct{ c *redisConn }

func (d *redisDirectory) nodeKey(id string) string { return d.c.keys.node(id) }
func (d *redisDirectory) sessKey(id string) string { return d.c.keys.sess(id) }
func (d *redisDirectory) nodesKey() string         { return d.c.keys.nodes() }

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
		urls, err := d.nodeURLs(ctx, ids)
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

// nodeURLs reads the node records of ids (nil where there is none): one
// MGET on one Redis; on a Redis Cluster, where node records are in
// different slots, one pipeline of GETs (go-redis sends each shard its own).
func (d *redisDirectory) nodeURLs(ctx context.Context, ids []string) ([]any, error) {
	keys := make([]string, len(ids))
	for i, id := range ids {
		keys[i] = d.nodeKey(id)
	}
	if !d.c.keys.tagged {
		return d.c.rdb.MGet(ctx, keys...).Result()
	}
	cmds := make([]*redis.StringCmd, len(keys))
	_, err := d.c.rdb.Pipelined(ctx, func(p redis.Pipeliner) error {
		for i, k := range keys {
			cmds[i] = p.Get(ctx, k)
		}
		return nil
	})
	if err != nil && !errors.Is(err, redis.Nil) {
		return nil, err
	}
	out := make([]any, len(cmds))
	for i, c := range cmds {
		if v, err := c.Result(); err == nil {
			out[i] = v
		}
	}
	return out, nil
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
		if d.c.keys.tagged {
			res, err = d.lookupSharded(ctx, session)
			return err
		}
		res, err = lookupScript.Run(ctx, d.c.rdb, []string{d.sessKey(session)}, d.c.keys.prefix+"node:").Slice()
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

// lookupSharded is lookupScript on a Redis Cluster, where the session's
// record and its owner's node record live in different slots: two GETs,
// one after the other (the owner's record is read after the session's, as
// in the script). It answers as the script does.
func (d *redisDirectory) lookupSharded(ctx context.Context, session string) ([]any, error) {
	v, err := d.c.rdb.Get(ctx, d.sessKey(session)).Result()
	if err != nil {
		return nil, err
	}
	id, p := splitOwner(v)
	u, err := d.c.rdb.Get(ctx, d.nodeKey(id)).Result()
	if errors.Is(err, redis.Nil) {
		return []any{id}, nil
	}
	if err != nil {
		return nil, err
	}
	return []any{id, u, p}, nil
}

func (d *redisDirectory) Release(ctx context.Context, session, node string) error {
	return d.c.do(ctx, func(ctx context.Context) error {
		return releaseSessionScript.Run(ctx, d.c.rdb, []string{d.sessKey(session)}, node).Err()
	})
}
