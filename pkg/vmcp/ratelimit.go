package vmcp

import (
	"time"

	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/ratelimit"
)

// startLimits puts the rate limits of cfg in front of the call core:
// their budgets in Redis when the cluster has one (shared by every node),
// else in this node's memory, on the clock now (nil: time.Now). The rule
// list is live: a reload replaces it (applyRateLimits).
func (s *Server) startLimits(cfg *config.Config, now func() time.Time) {
	var store ratelimit.Store = ratelimit.NewMemory(now)
	if s.cluster.Shared() {
		store = ratelimit.NewRedis(s.cluster.Script, s.cluster.KeyPrefix())
	}
	s.limits = ratelimit.NewLive(store, s.metrics.Registry, s.log)
	s.limits.Set(cfg.RateLimits)
	s.core.SetLimiter(s.limits)
}

// applyRateLimits applies a reloaded rate_limits list: new rules count
// from the next request, removed ones stop, unchanged ones keep their
// budgets. It reports whether the list changed.
func (s *Server) applyRateLimits(rules []config.RateLimit) bool {
	changed := s.limits.Set(rules)
	if changed {
		s.log.Info("config reload: rate_limits applied", "rules", len(rules))
	}
	return changed
}
