package ratelimit

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"
)

// gcra is the GCRA as one atomic Redis script on one key (KEYS[1]: its
// theoretical arrival time in µs of Redis's clock, so every node agrees).
// ARGV: the interval and the burst tolerance (interval × burst), in µs.
// It returns 0 (taken) or the µs to wait (refused; nothing changed).
var gcra = redis.NewScript(`
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tat = tonumber(redis.call('GET', KEYS[1]) or now)
if tat < now then tat = now end
local nxt = tat + interval
local allowAt = nxt - tonumber(ARGV[2])
if now < allowAt then return allowAt - now end
redis.call('SET', KEYS[1], nxt, 'PX', math.floor((nxt - now) / 1000) + 1)
return 0
`)

// Runner runs a script on Redis with the given keys and arguments (the
// cluster's connection: cluster.Cluster.Script).
type Runner func(ctx context.Context, s *redis.Script, keys []string, args ...any) (any, error)

// Redis is the Store shared by every node on one Redis: one script run
// (EVALSHA) per Take, on one key per rule and principal, a hash tag (one
// slot on a Redis Cluster), expiring when its budget is full again.
type Redis struct {
	run    Runner
	prefix string
}

// NewRedis returns the Store running its script through run on keys
// under prefix (the cluster's key prefix).
func NewRedis(run Runner, prefix string) *Redis { return &Redis{run: run, prefix: prefix} }

// Take is the GCRA on key (Store); err: Redis could not be asked.
func (s *Redis) Take(ctx context.Context, key string, interval time.Duration, burst int) (time.Duration, error) {
	us := interval.Microseconds()
	res, err := s.run(ctx, gcra, []string{s.prefix + "rl:{" + key + "}"}, us, us*int64(burst))
	if err != nil {
		return 0, err
	}
	wait, ok := res.(int64)
	if !ok {
		return 0, fmt.Errorf("rate limit script answered %T, want an integer", res)
	}
	return time.Duration(wait) * time.Microsecond, nil
}
