package cluster

import "github.com/redis/go-redis/v9"

// SharedRedis is this node's Redis client for state other packages keep
// beside the cluster's (tool pins, pkg/pin), with the key prefix and
// whether keys need hash tags (Redis Cluster, keys.go); a nil client in
// memory mode. Operations are bounded by the client's own timeouts.
func (c *Cluster) SharedRedis() (rdb redis.UniversalClient, prefix string, tagged bool) {
	if c.redis == nil {
		return nil, "", false
	}
	return c.redis.rdb, c.redis.keys.prefix, c.redis.keys.tagged
}
