package integration

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/ratelimit"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// rlScriptRuns is how many times Redis ran a script (EVALSHA and EVAL).
func rlScriptRuns(t *testing.T, rdb redis.UniversalClient) int {
	t.Helper()
	info, err := rdb.Info(context.Background(), "commandstats").Result()
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(info, "\n") {
		if !strings.HasPrefix(line, "cmdstat_evalsha:") && !strings.HasPrefix(line, "cmdstat_eval:") {
			continue
		}
		_, rest, _ := strings.Cut(line, "calls=")
		calls, _, _ := strings.Cut(rest, ",")
		c, err := strconv.Atoi(calls)
		require.NoError(t, err)
		n += c
	}
	return n
}

// rlNodes starts two vmcp nodes with auth and rules on the Redis topo.
func rlNodes(t *testing.T, topo clustertest.Redis, idp *authtest.IdP, rules ...config.RateLimit) (*clNode, *clNode) {
	prefix := topo.Prefix(t)
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) {
		harness.AddCounter(s, "count")
		harness.AddEcho(s, "echo")
	})
	mutate := func(c *config.Config) {
		rlAuth(idp)(c)
		c.RateLimits = rules
	}
	return clStartNodeWith(t, "n1", topo, prefix, false, mutate, b.Config()), clStartNodeWith(t, "n2", topo, prefix, false, mutate, b.Config())
}

// Two nodes on one Redis share one budget: a principal's calls through
// either node, on either revision, draw on it, and the 11th under a
// 10-per-hour rule is refused on both; another principal is unaffected.
// Each check is one script run on Redis.
func TestRateLimitTwoNodesOnOneRedisShareOneBudget(t *testing.T) {
	t.Parallel()
	srv := clustertest.Start(t) // private: its command counts are this test's
	topo := clustertest.Redis{Name: "redis", URL: srv.URL()}
	idp := authtest.Start(t, rlAudience)
	n1, n2 := rlNodes(t, topo, idp, rlRule(10, time.Hour, config.StoreDeny, "alpha_count"))
	alice := rlToken(t, idp, "alice")
	legacy := rlConnect(t, n1.url, clLegacy, alice)
	modern := rlConnect(t, n2.url, "", alice)
	rdb := topo.Client(t)

	before := rlScriptRuns(t, rdb)
	for i := 1; i <= 10; i++ {
		cs := legacy
		if i%2 == 0 {
			cs = modern
		}
		_, err := rlCall(t, cs, "alpha_count")
		require.NoError(t, err, "call %d", i)
	}
	runs := rlScriptRuns(t, rdb) - before
	assert.GreaterOrEqual(t, runs, 10)
	assert.LessOrEqual(t, runs, 10+2, "one script run per check (and one EVAL per node that had not loaded it)")

	for _, cs := range []*mcp.ClientSession{legacy, modern} {
		_, err := rlCall(t, cs, "alpha_count")
		wait := rlRefusal(t, err, "rate_limits[0]")
		assert.Greater(t, wait, int64(5*time.Minute/time.Millisecond), "one interval of 6 minutes, less the time the test took")
	}
	_, err := rlCall(t, rlConnect(t, n1.url, "", rlToken(t, idp, "bob")), "alpha_count")
	require.NoError(t, err, "another principal")
	limited := rlCount(t, n1.srv.Metrics().Registry, "0", ratelimit.OutcomeLimited) + rlCount(t, n2.srv.Metrics().Registry, "0", ratelimit.OutcomeLimited)
	assert.Equal(t, 2.0, limited)
}

// With Redis down a rule with on_store_error: deny refuses (naming the
// rule, with retryAfterMs) and one with allow lets the call through;
// both are counted. A Modern client (a Legacy one gets 503: the cluster
// cannot reach its sessions' store).
func TestRateLimitRedisDownDenyRefusesAndCounts(t *testing.T) {
	t.Parallel()
	srv := clustertest.Start(t)
	topo := clustertest.Redis{Name: "redis", URL: srv.URL()}
	idp := authtest.Start(t, rlAudience)
	n1, _ := rlNodes(t, topo, idp,
		rlRule(10, time.Hour, config.StoreDeny, "alpha_count"),
		rlRule(10, time.Hour, config.StoreAllow, "alpha_echo"))
	cs := rlConnect(t, n1.url, "", rlToken(t, idp, "alice"))
	_, err := rlCall(t, cs, "alpha_count")
	require.NoError(t, err, "Redis up")

	srv.Stop()
	_, err = rlCall(t, cs, "alpha_count")
	require.Error(t, err)
	assert.Contains(t, err.Error(), "cannot be checked")
	assert.Equal(t, int64(1000), rlRefusal(t, err, "rate_limits[0]"))
	_, err = rlCall(t, cs, "alpha_echo")
	require.NoError(t, err, "on_store_error: allow")
	reg := n1.srv.Metrics().Registry
	assert.Equal(t, 1.0, rlCount(t, reg, "0", ratelimit.OutcomeStoreDeny))
	assert.Equal(t, 1.0, rlCount(t, reg, "1", ratelimit.OutcomeStoreAllow))
}
