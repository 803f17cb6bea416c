package integration

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/ratelimit"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

const rlAudience = "https://vmcp.example.com/mcp"

// rlClock is the injected clock of in-memory rate limits.
type rlClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *rlClock) Now() time.Time      { c.mu.Lock(); defer c.mu.Unlock(); return c.now }
func (c *rlClock) Add(d time.Duration) { c.mu.Lock(); c.now = c.now.Add(d); c.mu.Unlock() }

// rlAuth makes vmcp a resource server of idp.
func rlAuth(idp *authtest.IdP) func(*config.Config) {
	return func(c *config.Config) {
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: rlAudience, ResourceName: "vmcp",
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
	}
}

// rlRule is n requests per period on tools, for principals in group free.
func rlRule(n int, period time.Duration, onStoreError string, tools ...string) config.RateLimit {
	return config.RateLimit{When: config.AuthzMatch{Claims: map[string][]string{"groups": {"free"}}}, Tools: tools,
		Per: config.PerPrincipal, Requests: n, Period: config.Duration(period), Burst: n, OnStoreError: onStoreError}
}

// rlToken is an access token of sub in group free.
func rlToken(t *testing.T, idp *authtest.IdP, sub string) string {
	c := idp.Claims(sub)
	c["groups"] = []string{"free"}
	return idp.Sign(t, c)
}

// rlConnect connects to endpoint at version ("" negotiates the Modern
// revision) with token.
func rlConnect(t *testing.T, endpoint, version, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "ratelimit-client", Version: "test"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: &http.Client{Transport: &authtest.Bearer{Token: token}}, DisableStandaloneSSE: true}
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// rlCall calls tool and returns its text, or the error.
func rlCall(t *testing.T, cs *mcp.ClientSession, tool string) (string, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "x"}})
	if err != nil {
		return "", err
	}
	require.False(t, res.IsError, "%v", res.Content)
	return harness.Text(t, res), nil
}

// rlRefusal checks err is a rate limit refusal naming the rule and
// returns its retryAfterMs.
func rlRefusal(t *testing.T, err error, rule string) int64 {
	t.Helper()
	var we *jsonrpc.Error
	require.True(t, errors.As(err, &we), "a JSON-RPC error, got %v", err)
	assert.Equal(t, int64(ratelimit.CodeRateLimited), we.Code)
	assert.Contains(t, we.Message, rule)
	var data struct {
		RetryAfterMs *int64 `json:"retryAfterMs"`
	}
	require.NoError(t, json.Unmarshal(we.Data, &data), "data: %s", we.Data)
	require.NotNil(t, data.RetryAfterMs, "data holds retryAfterMs: %s", we.Data)
	return *data.RetryAfterMs
}

// rlCount is vmcp_rate_limit_total{rule,outcome} of reg.
func rlCount(t *testing.T, reg prometheus.Gatherer, rule, outcome string) float64 {
	t.Helper()
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != "vmcp_rate_limit_total" {
			continue
		}
		for _, m := range mf.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			if labels["rule"] == rule && labels["outcome"] == outcome {
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

// Under a 10-per-minute rule the 11th call within the minute is refused
// before it reaches the backend (the next allowed call is the backend
// session's 11th), with retryAfterMs; another principal's calls and
// another tool are unaffected; after retryAfterMs the call passes. Both
// revisions; the clock is injected.
func TestRateLimitEleventhCallInAMinuteRefused(t *testing.T) {
	t.Parallel()
	for _, rev := range []struct{ name, version string }{{"legacy", clLegacy}, {"modern", ""}} {
		t.Run(rev.name, func(t *testing.T) {
			t.Parallel()
			idp := authtest.Start(t, rlAudience)
			b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) {
				harness.AddCounter(s, "count")
				harness.AddEcho(s, "echo")
			})
			clk := &rlClock{now: time.Unix(1_700_000_000, 0)}
			v := harness.StartVMCPWithOptions(t, vmcp.Options{RateLimitNow: clk.Now}, func(c *config.Config) {
				rlAuth(idp)(c)
				c.RateLimits = []config.RateLimit{rlRule(10, time.Minute, config.StoreDeny, "alpha_count")}
			}, b.Config())
			alice := rlConnect(t, v.URL, rev.version, rlToken(t, idp, "alice"))
			bob := rlConnect(t, v.URL, rev.version, rlToken(t, idp, "bob"))
			for i := 1; i <= 10; i++ {
				_, err := rlCall(t, alice, "alpha_count")
				require.NoError(t, err, "call %d", i)
			}
			_, err := rlCall(t, alice, "alpha_count")
			require.Error(t, err, "the 11th call within the minute")
			assert.Equal(t, int64(6000), rlRefusal(t, err, "rate_limits[0]"))
			assert.NotContains(t, err.Error(), "alice")

			_, err = rlCall(t, bob, "alpha_count")
			require.NoError(t, err, "another principal")
			_, err = rlCall(t, alice, "alpha_echo")
			require.NoError(t, err, "a tool no rule names")

			clk.Add(6 * time.Second)
			n, err := rlCall(t, alice, "alpha_count")
			require.NoError(t, err, "after retryAfterMs")
			assert.Equal(t, "11", n, "the refused call never reached the backend")
			reg := v.Server.Metrics().Registry
			assert.Equal(t, 1.0, rlCount(t, reg, "0", ratelimit.OutcomeLimited))
			assert.Equal(t, 12.0, rlCount(t, reg, "0", ratelimit.OutcomeAllowed))
		})
	}
}

// A Legacy call the relay hands to the go-sdk path (a stdio backend) is
// counted once, not once per routing: three calls under a 3-per-minute
// rule pass (the relay's routing took one each before Admit existed).
func TestRateLimitLegacyStdioCallCountedOnce(t *testing.T) {
	t.Parallel()
	idp := authtest.Start(t, rlAudience)
	clk := &rlClock{now: time.Unix(1_700_000_000, 0)}
	v := harness.StartVMCPWithOptions(t, vmcp.Options{RateLimitNow: clk.Now}, func(c *config.Config) {
		rlAuth(idp)(c)
		c.RateLimits = []config.RateLimit{rlRule(3, time.Minute, config.StoreDeny, "st_counter")}
	}, harness.StdioBackend(t, "st"))
	cs := rlConnect(t, v.URL, clLegacy, rlToken(t, idp, "alice"))
	for i := 1; i <= 3; i++ {
		_, err := rlCall(t, cs, "st_counter")
		require.NoError(t, err, "call %d", i)
	}
	_, err := rlCall(t, cs, "st_counter")
	rlRefusal(t, err, "rate_limits[0]")
	reg := v.Server.Metrics().Registry
	assert.Equal(t, 3.0, rlCount(t, reg, "0", ratelimit.OutcomeAllowed))
	assert.Equal(t, 1.0, rlCount(t, reg, "0", ratelimit.OutcomeLimited))
}
