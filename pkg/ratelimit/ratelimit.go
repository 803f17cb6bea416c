// Package ratelimit enforces the rate_limits rules (config.RateLimit) on
// the requests that reach a backend: every matching rule takes one request
// from its budget, a GCRA (generic cell rate algorithm: one theoretical
// arrival time per rule and principal) kept in memory (Memory) or, when
// the cluster has Redis, in Redis (one atomic script per check, shared by
// every node). A request over a rule is refused with a JSON-RPC error
// naming the rule, with retryAfterMs in its data.
package ratelimit

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"log/slog"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/policy"
)

// CodeRateLimited is the JSON-RPC error code of a refused request (the
// implementation-defined server error range; MCP defines none for it).
const CodeRateLimited = -32000

// storeRetry is the retryAfterMs of a request refused because the store
// could not be asked (on_store_error: deny).
const storeRetry = time.Second

// Outcomes of a check, the outcome label of vmcp_rate_limit_total.
const (
	OutcomeAllowed    = "allowed"     // within the rule's budget
	OutcomeLimited    = "limited"     // over it: refused
	OutcomeStoreAllow = "store_allow" // the store failed; on_store_error: allow
	OutcomeStoreDeny  = "store_deny"  // the store failed; on_store_error: deny (refused)
)

// Store keeps the GCRA state. Take takes one request from key's budget of
// burst requests refilled one per interval; wait > 0 refuses it (the
// budget has one again after wait) and changes nothing. err: the store
// could not be asked.
type Store interface {
	Take(ctx context.Context, key string, interval time.Duration, burst int) (wait time.Duration, err error)
}

// Limiter is the compiled rule list over one Store; safe for concurrent use.
type Limiter struct {
	rules  []rule
	store  Store
	counts *prometheus.CounterVec
	log    *slog.Logger
	logged atomic.Int64 // when a store failure was last logged (unix ns)
}

type rule struct {
	index        int
	label        string // the rule label: its index
	what         string // the limit as the error names it
	match        *policy.Matcher
	global       bool
	interval     time.Duration
	burst        int
	allowOnError bool
	key          string // the key prefix: a hash of the rule's scope and its rank among rules of that scope
}

// New compiles rules (validated, defaults applied) over store; counts go
// to reg as vmcp_rate_limit_total{rule,outcome}. No rules: nil (no limits).
func New(rules []config.RateLimit, store Store, reg prometheus.Registerer, log *slog.Logger) *Limiter {
	return compile(rules, store, newCounts(reg), log)
}

// newCounts is vmcp_rate_limit_total, registered on reg (nil: not).
func newCounts(reg prometheus.Registerer) *prometheus.CounterVec {
	c := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmcp_rate_limit_total",
		Help: "Rate limit checks of requests bound for a backend, by rule (index in rate_limits) and outcome (allowed, limited, store_allow, store_deny).",
	}, []string{"rule", "outcome"})
	if reg != nil {
		reg.MustRegister(c)
	}
	return c
}

// compile is New with its counter made. A rule's budget is keyed by a
// hash of its scope and its rank among rules of that scope, not by its
// index: a reload that adds, removes or moves other rules keeps it.
func compile(rules []config.RateLimit, store Store, counts *prometheus.CounterVec, log *slog.Logger) *Limiter {
	if len(rules) == 0 {
		return nil
	}
	l := &Limiter{store: store, log: log, counts: counts}
	seen := map[string]int{}
	for i, r := range rules {
		interval := r.Period.D() / time.Duration(r.Requests)
		interval = max(interval, time.Microsecond)
		h := ruleHash(&r)
		l.rules = append(l.rules, rule{index: i, label: strconv.Itoa(i), what: describe(i, &r),
			match: policy.NewMatcher(r.When.Claims, r.Items()), global: r.Per == config.PerGlobal,
			interval: interval, burst: r.Burst, allowOnError: r.OnStoreError == config.StoreAllow,
			key: fmt.Sprintf("%s.%d", h, seen[h])})
		seen[h]++
		for _, o := range []string{OutcomeAllowed, OutcomeLimited} {
			l.counts.WithLabelValues(strconv.Itoa(i), o) // the series exist from the start
		}
	}
	return l
}

// describe names rule i for the client: its index, budget and patterns.
func describe(i int, r *config.RateLimit) string {
	var pats []string
	for _, l := range []struct {
		key  string
		pats []string
	}{{"backends", r.Backends}, {"tools", r.Tools}, {"prompts", r.Prompts}, {"resources", r.Resources}} {
		if len(l.pats) > 0 {
			pats = append(pats, l.key+" "+strings.Join(l.pats, ","))
		}
	}
	return fmt.Sprintf("rate_limits[%d] (%d per %s per %s on %s)", i, r.Requests, r.Period, r.Per, strings.Join(pats, "; "))
}

// Check takes one request of principal pr for the item of kind k named
// name on backend (a completion: any other kind, name "") from every rule
// that matches, in order. A refusal returns the rule's index and the
// client's JSON-RPC error; rule is -1 when nothing refused. A nil Limiter
// allows everything.
func (l *Limiter) Check(ctx context.Context, pr identity.Principal, k aggregator.Kind, backend, name string) (refusedBy int, err error) {
	if l == nil {
		return -1, nil
	}
	for i := range l.rules {
		r := &l.rules[i]
		if !r.match.Item(k, backend, name) || !r.match.Principal(pr) {
			continue
		}
		if err := l.take(ctx, r, pr); err != nil {
			return r.index, err
		}
	}
	return -1, nil
}

// take asks the store for one request of r's budget of pr.
func (l *Limiter) take(ctx context.Context, r *rule, pr identity.Principal) error {
	key := r.key
	if !r.global {
		key += ":" + pr.Tag() // hashed: no identity in the store's keys ("" for anonymous)
	}
	wait, err := l.store.Take(ctx, key, r.interval, r.burst)
	switch {
	case err != nil && r.allowOnError:
		l.counts.WithLabelValues(r.label, OutcomeStoreAllow).Inc()
		l.storeFailed(r, err)
		return nil
	case err != nil:
		l.counts.WithLabelValues(r.label, OutcomeStoreDeny).Inc()
		l.storeFailed(r, err)
		return refusal(fmt.Sprintf("rate limit %s cannot be checked (its store is unavailable); refused (on_store_error: deny)", r.what), storeRetry, r.index)
	case wait > 0:
		l.counts.WithLabelValues(r.label, OutcomeLimited).Inc()
		return refusal(fmt.Sprintf("rate limit exceeded: %s; retry after %s", r.what, roundUp(wait)), wait, r.index)
	}
	l.counts.WithLabelValues(r.label, OutcomeAllowed).Inc()
	return nil
}

// logEvery bounds the log lines of store failures (each is counted).
const logEvery = 10 * time.Second

// storeFailed logs a store failure, at most once per logEvery.
func (l *Limiter) storeFailed(r *rule, err error) {
	now, last := time.Now().UnixNano(), l.logged.Load()
	if l.log != nil && now-last >= int64(logEvery) && l.logged.CompareAndSwap(last, now) {
		l.log.Warn("rate limit store unavailable; counted in vmcp_rate_limit_total", "rule", r.index, "on_store_error_allow", r.allowOnError, "error", err)
	}
}

// ruleHash is a short hash of r's scope (when, patterns, per), not of its
// numbers: a reload that changes a rule's requests, period, burst or
// on_store_error keeps its budget (the GCRA's arrival time, met by the
// new interval and burst: a lowered limit refuses at once what it no
// longer allows), while a rule of another scope starts a new one.
func ruleHash(r *config.RateLimit) string {
	scope := *r
	scope.Requests, scope.Period, scope.Burst, scope.OnStoreError = 0, 0, 0, ""
	h := fnv.New64a()
	fmt.Fprintf(h, "%v", scope) // fmt prints maps sorted
	return strconv.FormatUint(h.Sum64()&0xffffffff, 36)
}

// refusal is the client's error for a refused request: retryAfterMs (at
// least 1) and the rule's index in its data.
func refusal(msg string, wait time.Duration, rule int) error {
	ms := max((wait+time.Millisecond-1)/time.Millisecond, 1)
	data, _ := json.Marshal(struct {
		RetryAfterMs int64 `json:"retryAfterMs"`
		Rule         int   `json:"rule"`
	}{int64(ms), rule})
	return &jsonrpc.Error{Code: CodeRateLimited, Message: msg, Data: data}
}

// roundUp is d rounded up to the millisecond, for messages.
func roundUp(d time.Duration) time.Duration {
	return (d + time.Millisecond - 1).Truncate(time.Millisecond)
}
