package ratelimit

import (
	"context"
	"log/slog"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/identity"
)

// Live is the rate limits of a running vmcp: a rule list that a config
// reload replaces whole (Set), over one Store and one counter for the
// process's life, so a rule the reload leaves unchanged keeps its budget
// (its key is a hash of the rule). Safe for concurrent use; a Check in
// flight during Set finishes on the rules it began with.
type Live struct {
	store  Store
	counts *prometheus.CounterVec
	log    *slog.Logger
	cur    atomic.Pointer[Limiter] // nil: no rules

	mu    sync.Mutex // serialises Set
	rules []config.RateLimit
}

// NewLive returns Live with no rules over store, its checks counted on
// reg (vmcp_rate_limit_total{rule,outcome}; nil: not registered).
func NewLive(store Store, reg prometheus.Registerer, log *slog.Logger) *Live {
	return &Live{store: store, counts: newCounts(reg), log: log}
}

// Set makes rules (validated, defaults applied) the limits from the next
// Check on, and reports whether they differ from the running ones.
func (v *Live) Set(rules []config.RateLimit) (changed bool) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if reflect.DeepEqual(v.rules, rules) || (len(v.rules) == 0 && len(rules) == 0) {
		return false
	}
	v.rules = slices.Clone(rules)
	v.cur.Store(compile(v.rules, v.store, v.counts, v.log))
	return true
}

// Check is Limiter.Check on the current rules.
func (v *Live) Check(ctx context.Context, pr identity.Principal, k aggregator.Kind, backend, name string) (int, error) {
	return v.cur.Load().Check(ctx, pr, k, backend, name)
}
