package integration

import (
	"testing"

	"github.com/vmcp/vmcp/pkg/cluster"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
	"github.com/vmcp/vmcp/pkg/config"
)

// clTopologies are the Redis deployments the multi-node tests run on: one
// Redis (the shared test Redis), a Redis Cluster of three primaries and a
// Sentinel set (primary, replica, three sentinels), the last two started
// by the test on loopback and stopped at its end.
var clTopologies = []struct {
	name  string
	start func(testing.TB) clustertest.Redis
}{
	{"redis", clustertest.Standalone},
	{"cluster", func(t testing.TB) clustertest.Redis { return clustertest.StartCluster(t, 3) }},
	{"sentinel", func(t testing.TB) clustertest.Redis { return clustertest.StartSentinels(t).Redis() }},
}

// clOnEachTopology runs f as a subtest on each of clTopologies.
func clOnEachTopology(t *testing.T, f func(t *testing.T, topo clustertest.Redis)) {
	for _, tp := range clTopologies {
		t.Run(tp.name, func(t *testing.T) { f(t, tp.start(t)) })
	}
}

// clNewEnvTopo is clNewEnv on topo, under a fresh prefix.
func clNewEnvTopo(t testing.TB, topo clustertest.Redis, n int, killable bool) *clEnv {
	t.Helper()
	return clNewEnvOn(t, topo, topo.Prefix(t), n, killable)
}

// clClusterConfig is the cluster section naming topo.
func clClusterConfig(topo clustertest.Redis) config.Cluster {
	c := config.Cluster{RedisURL: topo.URL, RedisCluster: topo.Cluster, RedisTLSCAFile: topo.CAFile, RedisPassword: topo.Password}
	if topo.SentinelMaster != "" {
		c.RedisSentinel = &config.RedisSentinel{Master: topo.SentinelMaster, Addrs: topo.SentinelAddrs, Password: topo.SentinelPassword}
	}
	return c
}

// clRedisOf is topo as cluster.Redis (for the key names).
func clRedisOf(topo clustertest.Redis) cluster.Redis {
	return cluster.Redis{URL: topo.URL, Cluster: topo.Cluster}
}

// redis_tls was never tried against a TLS Redis: the Legacy full flow
// through a balancer runs on a TLS-only Redis whose certificate the
// operator's own CA signed (cluster.redis_tls_ca_file).
func TestClusterLegacyFullFlowOnATLSOnlyRedis(t *testing.T) {
	t.Parallel()
	onLegacyFullFlowThroughBalancer(t, clustertest.StartTLS(t).Redis())
}
