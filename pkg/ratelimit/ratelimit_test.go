package ratelimit

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/identity"
)

// clock is an injected clock tests move by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *clock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

var (
	alice = identity.Principal{Issuer: "i", Subject: "alice", Claims: map[string]any{"groups": []any{"free"}}}
	bob   = identity.Principal{Issuer: "i", Subject: "bob", Claims: map[string]any{"groups": []any{"free"}}}
	carol = identity.Principal{Issuer: "i", Subject: "carol", Claims: map[string]any{"groups": []any{"paid"}}}
)

func tenPerMinute(mut func(*config.RateLimit)) []config.RateLimit {
	r := config.RateLimit{When: config.AuthzMatch{Claims: map[string][]string{"groups": {"free"}}},
		Tools: []string{"search_*"}, Per: config.PerPrincipal, Requests: 10, Period: config.Duration(time.Minute),
		Burst: 10, OnStoreError: config.StoreDeny}
	if mut != nil {
		mut(&r)
	}
	return []config.RateLimit{r}
}

func call(l *Limiter, pr identity.Principal, tool string) (int, error) {
	return l.Check(context.Background(), pr, aggregator.KindTools, "b", tool)
}

// retryAfter is the retryAfterMs of a refusal.
func retryAfter(t *testing.T, err error) int64 {
	t.Helper()
	var we *jsonrpc.Error
	require.ErrorAs(t, err, &we)
	require.Equal(t, int64(CodeRateLimited), we.Code)
	var data struct{ RetryAfterMs int64 }
	require.NoError(t, json.Unmarshal(we.Data, &data))
	return data.RetryAfterMs
}

func TestEleventhCallInAMinuteRefusedOthersUnaffected(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Unix(1_000_000, 0)}
	reg := prometheus.NewRegistry()
	l := New(tenPerMinute(nil), NewMemory(clk.Now), reg, nil)
	for i := range 10 {
		_, err := call(l, alice, "search_web")
		require.NoError(t, err, "call %d", i+1)
	}
	clk.Add(5 * time.Second)
	rule, err := call(l, alice, "search_web")
	require.Error(t, err, "the 11th call within a minute")
	assert.Equal(t, 0, rule)
	assert.Contains(t, err.Error(), `rate_limits[0] (10 per 1m0s per principal on tools search_*)`)
	assert.NotContains(t, err.Error(), "alice")
	assert.Equal(t, int64(1000), retryAfter(t, err), "one interval (6s) after the first calls, 5s later")

	_, err = call(l, bob, "search_web")
	assert.NoError(t, err, "another principal has its own budget")
	_, err = call(l, carol, "search_web")
	assert.NoError(t, err, "a principal the rule's claims do not select")
	_, err = call(l, alice, "fetch")
	assert.NoError(t, err, "an item the rule does not name")

	clk.Add(time.Second)
	_, err = call(l, alice, "search_web")
	assert.NoError(t, err, "after retryAfterMs")
	assert.Equal(t, 1.0, testutil.ToFloat64(l.counts.WithLabelValues("0", OutcomeLimited)))
	assert.Equal(t, 12.0, testutil.ToFloat64(l.counts.WithLabelValues("0", OutcomeAllowed)))
}

func TestGlobalRuleSharesOneBudgetAndBurstBounds(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Unix(1_000_000, 0)}
	l := New(tenPerMinute(func(r *config.RateLimit) { r.Per, r.Burst, r.When = config.PerGlobal, 2, config.AuthzMatch{} }), NewMemory(clk.Now), nil, nil)
	_, err := call(l, alice, "search_a")
	require.NoError(t, err)
	_, err = call(l, carol, "search_b")
	require.NoError(t, err)
	_, err = call(l, identity.Principal{}, "search_a")
	require.Error(t, err, "burst 2: the third at once is refused, whoever sends it")
	assert.Equal(t, int64(6000), retryAfter(t, err))
}

type failing struct{}

func (failing) Take(context.Context, string, time.Duration, int) (time.Duration, error) {
	return 0, errors.New("redis down")
}

func TestStoreErrorDecidedByOnStoreErrorAndCounted(t *testing.T) {
	t.Parallel()
	deny := New(tenPerMinute(nil), failing{}, nil, nil)
	_, err := call(deny, alice, "search_a")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot be checked")
	assert.Equal(t, int64(1000), retryAfter(t, err))
	assert.Equal(t, 1.0, testutil.ToFloat64(deny.counts.WithLabelValues("0", OutcomeStoreDeny)))

	allow := New(tenPerMinute(func(r *config.RateLimit) { r.OnStoreError = config.StoreAllow }), failing{}, nil, nil)
	_, err = call(allow, alice, "search_a")
	require.NoError(t, err)
	assert.Equal(t, 1.0, testutil.ToFloat64(allow.counts.WithLabelValues("0", OutcomeStoreAllow)))
}

func TestMemoryReleasesIdleKeys(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Unix(1_000_000, 0)}
	m := NewMemory(clk.Now)
	for _, k := range []string{"a", "b", "c"} {
		_, err := m.Take(context.Background(), k, time.Second, 1)
		require.NoError(t, err)
	}
	require.Equal(t, 3, m.Len())
	clk.Add(sweepEvery)
	_, err := m.Take(context.Background(), "d", time.Second, 1)
	require.NoError(t, err)
	assert.Equal(t, 1, m.Len(), "keys whose budget is full again are dropped")
}

func TestNoRulesNoLimiter(t *testing.T) {
	t.Parallel()
	assert.Nil(t, New(nil, NewMemory(nil), nil, nil))
	var l *Limiter
	rule, err := call(l, alice, "x")
	assert.NoError(t, err)
	assert.Equal(t, -1, rule)
}
