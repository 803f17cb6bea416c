package ratelimit

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/config"
)

func liveCall(l *Live, tool string) (int, error) {
	return l.Check(context.Background(), alice, aggregator.KindTools, "b", tool)
}

// A reload that lowers a rule's limit refuses the next request at once
// (the budget spent under the old numbers is kept), a rule added before
// another does not reset the other's budget, and a removed rule stops.
func TestLiveReloadLowersLimitKeepsUnchangedBudgetsAndDropsRemovedRules(t *testing.T) {
	t.Parallel()
	clk := &clock{now: time.Unix(1_000_000, 0)}
	l := NewLive(NewMemory(clk.Now), prometheus.NewRegistry(), nil)
	_, err := liveCall(l, "search_a")
	require.NoError(t, err, "no rules: nothing limited")

	rules := tenPerMinute(nil)
	require.True(t, l.Set(rules))
	require.False(t, l.Set(tenPerMinute(nil)), "the same list: unchanged")
	for i := range 9 {
		_, err = liveCall(l, "search_a")
		require.NoError(t, err, "call %d", i+1)
	}
	lowered := tenPerMinute(func(r *config.RateLimit) { r.Requests, r.Burst = 5, 5 })
	require.True(t, l.Set(lowered))
	rule, err := liveCall(l, "search_a")
	require.Error(t, err, "9 calls this minute, 10 allowed before, 5 now: the lowered limit refuses the 10th")
	assert.Equal(t, 0, rule)

	other := config.RateLimit{Tools: []string{"fetch"}, Per: config.PerGlobal, Requests: 1,
		Period: config.Duration(time.Hour), Burst: 1, OnStoreError: config.StoreDeny}
	require.True(t, l.Set(append([]config.RateLimit{other}, lowered...)))
	rule, err = liveCall(l, "search_a")
	require.Error(t, err, "the rule moved to index 1 keeps its budget")
	assert.Equal(t, 1, rule)

	require.True(t, l.Set([]config.RateLimit{other}))
	_, err = liveCall(l, "search_a")
	assert.NoError(t, err, "the removed rule no longer limits")
	require.True(t, l.Set(nil))
	assert.Nil(t, l.cur.Load(), "no rules: no limiter")
}
