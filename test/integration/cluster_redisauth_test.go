package integration

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
	"github.com/vmcp/vmcp/pkg/config"
)

// clSentinelAuth are the passwords of the Sentinel sets below: the
// servers' (cluster.redis_password) and the sentinels' own
// (cluster.redis_sentinel.password).
var clSentinelAuth = clustertest.SentinelAuth{Password: "srv-s3cret-pw", SentinelPassword: "snt-s3cret-pw"}

// Sentinels with requirepass were not supported: the Legacy full flow
// through a balancer runs on a Sentinel set (one primary, one replica,
// three sentinels) where the servers and the sentinels each require their
// own password, and no node's log quotes either.
func TestClusterLegacyFullFlowOnPasswordedSentinels(t *testing.T) {
	t.Parallel()
	onLegacyFullFlowThroughBalancer(t, clustertest.StartSentinelsWith(t, clSentinelAuth).Redis())
	clNoSecretIn(t, "the nodes' logs", clDiagFor(t).String())
}

// A killable node dials Redis through a Cutter: with a dialer of its own
// go-redis dropped TLS, so on a TLS-only Redis such a node never reached
// it. A node killed there loses its sessions only.
func TestClusterKilledNodeOnATLSOnlyRedisWentPlain(t *testing.T) {
	t.Parallel()
	onKilledNodeLosesItsSessionsOnly(t, clustertest.StartTLS(t).Redis())
}

// A node configured for plain TCP (and a password) on a Redis that
// accepts only TLS: it said only "EOF". /readyz now says to set
// cluster.redis_tls, a Legacy initialize gets the documented 503, and no
// answer or log line quotes the password.
func TestClusterPlainNodeOnATLSOnlyRedisSaidOnlyEOF(t *testing.T) {
	t.Parallel()
	srv := clustertest.StartTLS(t)
	const pw = "pw-s3cret-plain"
	topo := clustertest.Redis{Name: "plain", URL: "redis://" + srv.Addr + "/0"} // no CA, no TLS
	n := clStartNodeWith(t, "n1", topo, "vmcptest:plain:", false, func(c *config.Config) { c.Cluster.RedisPassword = pw }, clBackend(t).Config())
	code, why := clReady(t, n)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Contains(t, why, "set cluster.redis_tls")
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + clLegacy + `","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	req, err := http.NewRequest(http.MethodPost, n.url, strings.NewReader(init))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	require.Equal(t, http.StatusServiceUnavailable, resp.StatusCode, "%s", body)
	for what, s := range map[string]string{"/readyz": why, "the 503": string(body), "/status": clGet(t, n.base+"/status"), "the log": clDiagFor(t).String()} {
		require.NotContains(t, s, pw, what)
	}
}

// clNoSecretIn fails t if s (named what) quotes a password of clSentinelAuth.
func clNoSecretIn(t *testing.T, what, s string) {
	t.Helper()
	require.NotContains(t, s, clSentinelAuth.Password, what)
	require.NotContains(t, s, clSentinelAuth.SentinelPassword, what)
}

// clGet is the body of a GET of u.
func clGet(t *testing.T, u string) string {
	t.Helper()
	resp, err := http.Get(u)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}
