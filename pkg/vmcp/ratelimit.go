package vmcp

import (
	"time"

	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/ratelimit"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// limiter is the rate limits of cfg for the call core (nil: none): their
// budgets in Redis when the cluster has one (shared by every node), else
// in this node's memory, on the clock now (nil: time.Now).
func (s *Server) limiter(cfg *config.Config, now func() time.Time) upstream.Limiter {
	if len(cfg.RateLimits) == 0 {
		return nil
	}
	var store ratelimit.Store = ratelimit.NewMemory(now)
	if s.cluster.Shared() {
		store = ratelimit.NewRedis(s.cluster.Script, s.cluster.KeyPrefix())
	}
	return ratelimit.New(cfg.RateLimits, store, s.metrics.Registry, s.log)
}
