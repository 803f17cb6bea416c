package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const clusterKey = "mrtr:\n  state_key: 0123456789abcdef0123456789abcdef\n"

// okBackend is lines 1-3, clusterKey 4-5: the cluster section starts at line 6.
func TestClusterRedisFormsRules(t *testing.T) {
	tests := []struct {
		name, src, key string
		line           int
		msg            string
	}{
		{"url and cluster", "cluster:\n  redis_url: redis://r:6379\n  redis_cluster: [a:1, b:2]\n", "cluster.redis_cluster", 8, "exactly one of cluster.redis_url, cluster.redis_cluster and cluster.redis_sentinel may be set; cluster.redis_url is set too (line 7)"},
		{"cluster and sentinel", "cluster:\n  redis_cluster: [a:1]\n  redis_sentinel: {master: m, addrs: [s:26379]}\n", "cluster.redis_sentinel", 8, "cluster.redis_cluster is set too (line 7)"},
		{"empty cluster list", "cluster:\n  redis_cluster: []\n", "cluster.redis_cluster", 7, "needs at least one host:port"},
		{"cluster seed without port", "cluster:\n  redis_cluster: [a:1, b]\n", "cluster.redis_cluster[1]", 7, `want HOST:PORT, got "b"`},
		{"sentinel without master", "cluster:\n  redis_sentinel:\n    addrs: [s:26379]\n", "cluster.redis_sentinel.master", 7, "required"},
		{"sentinel without addrs", "cluster:\n  redis_sentinel:\n    master: m\n", "cluster.redis_sentinel.addrs", 7, "needs at least one host:port"},
		{"password without redis", "cluster:\n  redis_password: x\n", "cluster.redis_password", 7, "needs one of cluster.redis_url"},
		{"tls without redis", "cluster:\n  redis_tls: true\n", "cluster.redis_tls", 7, "needs one of"},
		{"CA file missing", "cluster:\n  redis_url: redis://r:6379\n  redis_tls_ca_file: /nonexistent/ca.pem\n", "cluster.redis_tls_ca_file", 8, "reading CA file"},
		{"CA file not PEM", "cluster:\n  redis_cluster: [a:1]\n  redis_tls_ca_file: " + notPEM + "\n", "cluster.redis_tls_ca_file", 8, "holds no PEM certificate"},
		{"redis_url port typo", "cluster:\n  redis_url: redis://r:notaport/0\n", "cluster.redis_url", 7, `parse: invalid port ":notaport" after host`},
		{"redis_url database not a number", "cluster:\n  redis_url: redis://r:6379/x\n", "cluster.redis_url", 7, `invalid database number: "x"`},
		{"redis_url option misspelt", "cluster:\n  redis_url: redis://r:6379/0?dial_timeot=3s\n", "cluster.redis_url", 7, "unexpected option: dial_timeot"},
		{"CA file without redis", "cluster:\n  redis_tls_ca_file: " + notPEM + "\n", "cluster.redis_tls_ca_file", 7, "needs one of"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := problemsOf(t, okBackend+clusterKey+tt.src)
			require.Len(t, ps, 1, "%v", ps)
			assert.Equal(t, tt.key, ps[0].Key)
			assert.Equal(t, tt.line, ps[0].Line)
			assert.Contains(t, ps[0].Msg, tt.msg)
		})
	}
}

// notPEM is a file that exists and holds no certificate.
const notPEM = "cluster_test.go"

func TestClusterRedisFormsNeedStateKeyAndAdvertiseURL(t *testing.T) {
	ps := problemsOf(t, okBackend+"listen: 0.0.0.0:8080\ncluster:\n  redis_sentinel: {master: m, addrs: [\"s:26379\"]}\n")
	require.Len(t, ps, 2, "%v", ps)
	got := map[string]string{ps[0].Key: ps[0].Msg, ps[1].Key: ps[1].Msg}
	assert.Contains(t, got["cluster.redis_sentinel"], "requires mrtr.state_key")
	assert.Contains(t, got["cluster.advertise_url"], "required with cluster.redis_sentinel")
}

func TestClusterRedisFormsValid(t *testing.T) {
	t.Setenv("REDIS_PW", "s3cret")
	for name, src := range map[string]string{
		"cluster":  "cluster:\n  redis_cluster: [10.0.0.1:6379, 10.0.0.2:6379]\n  redis_password: ${REDIS_PW}\n  redis_tls: true\n",
		"sentinel": "cluster:\n  redis_sentinel:\n    master: mymaster\n    addrs: [10.0.0.1:26379]\n  redis_username: vmcp\n  redis_password: ${REDIS_PW}\n",
		"url":      "cluster:\n  redis_url: redis://r:6379/0\n  redis_password: ${REDIS_PW}\n",
	} {
		t.Run(name, func(t *testing.T) {
			f, err := ParseFile([]byte(okBackend+clusterKey+src), "ok.yaml")
			require.NoError(t, err)
			assert.Empty(t, f.Warnings)
			assert.True(t, f.Config.Cluster.UsesRedis())
			assert.Equal(t, "s3cret", f.Config.Cluster.RedisPassword, "${VAR} expanded")
		})
	}
}

func TestClusterRedisPasswordUnsetVarIsAWarning(t *testing.T) {
	f, err := ParseFile([]byte(okBackend+clusterKey+"cluster:\n  redis_cluster: [a:1]\n  redis_password: ${VMCP_TEST_UNSET_REDIS_PW}\n"), "ok.yaml")
	require.NoError(t, err)
	require.Len(t, f.Warnings, 1)
	assert.Equal(t, "cluster.redis_password", f.Warnings[0].Key)
	assert.Equal(t, 8, f.Warnings[0].Line)
}

// The sentinels' own password is ${VAR} expanded and checked like the
// servers' (an unset variable is a warning at its line).
func TestClusterSentinelPasswordExpandedAndChecked(t *testing.T) {
	t.Setenv("SENTINEL_PW", "s3cret")
	src := "cluster:\n  redis_sentinel:\n    master: m\n    addrs: [s:26379]\n    username: watcher\n    password: ${SENTINEL_PW}\n"
	f, err := ParseFile([]byte(okBackend+clusterKey+src), "ok.yaml")
	require.NoError(t, err)
	assert.Equal(t, "s3cret", f.Config.Cluster.RedisSentinel.Password)
	assert.Equal(t, "watcher", f.Config.Cluster.RedisSentinel.Username)
	f, err = ParseFile([]byte(okBackend+clusterKey+strings.Replace(src, "SENTINEL_PW", "VMCP_TEST_UNSET_SENTINEL_PW", 1)), "ok.yaml")
	require.NoError(t, err)
	require.Len(t, f.Warnings, 1)
	assert.Equal(t, "cluster.redis_sentinel.password", f.Warnings[0].Key)
}

// A redis_url go-redis refuses (a port, database number or option typo)
// passed vmcp validate ("config OK") and failed vmcp serve at start, with
// no line. It is reported with its line, without the password.
func TestRedisURLTypoPassedValidate(t *testing.T) {
	ps := problemsOf(t, okBackend+clusterKey+"cluster:\n  redis_url: redis://:s3cret-pw@r:badport/0\n")
	require.Len(t, ps, 1, "%v", ps)
	assert.Equal(t, "cluster.redis_url", ps[0].Key)
	assert.Equal(t, 7, ps[0].Line)
	assert.Contains(t, ps[0].Msg, "badport")
	assert.NotContains(t, ps[0].Msg, "s3cret-pw")
}
