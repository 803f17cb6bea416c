package vmcp

import (
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/ratelimit"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// limiter is the rate limits of cfg for the call core (nil: none): their
// budgets in Redis when the cluster has one (shared by every node), else
// in this node's memory.
func (s *Server) limiter(cfg *config.Config) upstream.Limiter {
	if len(cfg.RateLimits) == 0 {
		return nil
	}
	var store ratelimit.Store = ratelimit.NewMemory(nil)
	if s.cluster.Shared() {
		store = ratelimit.NewRedis(s.cluster.Script, s.cluster.KeyPrefix())
	}
	return ratelimit.New(cfg.RateLimits, store, s.metrics.Registry, s.log)
}
