package cluster

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"
)

// Shared reports whether the cluster's state is in Redis (every node
// sees it), not in this node's memory.
func (c *Cluster) Shared() bool { return c.redis != nil }

// KeyPrefix is the prefix of every Redis key of the cluster ("" in
// memory mode).
func (c *Cluster) KeyPrefix() string {
	if c.redis == nil {
		return ""
	}
	return c.redis.keys.prefix
}

// Script runs s on the cluster's Redis (EVALSHA; EVAL once when Redis
// lacks it) within the operation timeout. While Redis is known to be
// unreachable it fails at once with an error wrapping ErrUnavailable.
func (c *Cluster) Script(ctx context.Context, s *redis.Script, keys []string, args ...any) (any, error) {
	if c.redis == nil {
		return nil, errors.New("cluster: no Redis (memory mode)")
	}
	var res any
	err := c.redis.do(ctx, func(ctx context.Context) error {
		var err error
		res, err = s.Run(ctx, c.redis.rdb, keys, args...).Result()
		return err
	})
	return res, err
}
