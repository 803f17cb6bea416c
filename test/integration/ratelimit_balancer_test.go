package integration

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/ratelimit"
)

// Calls through a round-robin balancer over two nodes on one Redis (a
// Legacy session's requests forwarded to its owner): each call is counted
// exactly once, on either revision, so the 11th under 10 per hour is the
// first refused.
func TestRateLimitThroughBalancerCountedOncePerCall(t *testing.T) {
	t.Parallel()
	srv := clustertest.Start(t)
	topo := clustertest.Redis{Name: "redis", URL: srv.URL()}
	idp := authtest.Start(t, rlAudience)
	n1, n2 := rlNodes(t, topo, idp, rlRule(10, time.Hour, config.StoreDeny, "alpha_count"))
	lb := clStartBalancer(t, n1, n2)
	for _, rev := range []struct{ name, version string }{{"legacy", clLegacy}, {"modern", ""}} {
		cs := rlConnect(t, lb.URL, rev.version, rlToken(t, idp, "user-"+rev.name))
		for i := 1; i <= 10; i++ {
			_, err := rlCall(t, cs, "alpha_count")
			require.NoError(t, err, "%s call %d", rev.name, i)
		}
		_, err := rlCall(t, cs, "alpha_count")
		rlRefusal(t, err, "rate_limits[0]")
	}
	sum := func(outcome string) float64 {
		return rlCount(t, n1.srv.Metrics().Registry, "0", outcome) + rlCount(t, n2.srv.Metrics().Registry, "0", outcome)
	}
	assert.Equal(t, 20.0, sum(ratelimit.OutcomeAllowed))
	assert.Equal(t, 2.0, sum(ratelimit.OutcomeLimited))
}
