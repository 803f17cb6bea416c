package vmcp_test

import (
	"context"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestListenStreamsOfAPrincipalWereUnbounded: a principal could open
// Modern listen streams without end, each holding a listen or a backend
// session on every per-principal backend. They now count against
// sessions.max_per_principal (and sessions.max) like Legacy sessions:
// alice's second stream is refused naming the limit, bob's is not, and
// alice's next one is accepted once her first ended.
func TestListenStreamsOfAPrincipalWereUnbounded(t *testing.T) {
	idp := outboundIdP(t, func(string) bool { return false })
	v := harness.StartVMCP(t, func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: audience,
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
		c.Sessions.MaxPerPrincipal = 1
	}, openBackend(t).Config())
	listen := func(who string) *http.Request {
		tok, err := idp.ClientToken(t.Context(), who, "")
		require.NoError(t, err)
		return post(t, v.URL, modernListen(1), map[string]string{"Mcp-Protocol-Version": "2026-07-28",
			"Mcp-Method": "subscriptions/listen", "Authorization": "Bearer " + tok})
	}
	ctx, cancel := context.WithCancel(t.Context())
	openSSE(t, listen("alice").WithContext(ctx)).next(t, "notifications/subscriptions/acknowledged")

	rctx, rcancel := context.WithTimeout(t.Context(), 10*time.Second) // an accepted stream would not end
	defer rcancel()
	resp, err := http.DefaultClient.Do(listen("alice").WithContext(rctx))
	require.NoError(t, err)
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	resp.Body.Close()
	require.NoError(t, err)
	assert.Contains(t, string(body), `"error"`)
	assert.Contains(t, string(body), "too many listen streams for this principal (sessions.max_per_principal is 1)")

	openSSE(t, listen("bob")).next(t, "notifications/subscriptions/acknowledged")
	cancel()
	require.Eventually(t, func() bool { return v.Server.ModernListens() == 1 }, 10*time.Second, 5*time.Millisecond,
		"alice's first stream ended")
	openSSE(t, listen("alice")).next(t, "notifications/subscriptions/acknowledged")
}
