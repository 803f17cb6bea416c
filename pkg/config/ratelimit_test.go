package config

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRateLimitsParseWithDefaults(t *testing.T) {
	t.Parallel()
	c, err := Parse([]byte(okBackend+`rate_limits:
  - when: {claims: {groups: [free]}}
    tools: ["search_*"]
    requests: 10
    period: 1m
  - backends: ["*"]
    per: global
    requests: 100
    period: 1s
    burst: 5
    on_store_error: allow
`), "ok.yaml")
	require.NoError(t, err)
	require.Len(t, c.RateLimits, 2)
	r := c.RateLimits[0]
	assert.Equal(t, []string{"free"}, r.When.Claims["groups"])
	assert.Equal(t, []string{"search_*"}, r.Tools)
	assert.Equal(t, PerPrincipal, r.Per)
	assert.Equal(t, 10, r.Burst, "burst defaults to requests")
	assert.Equal(t, StoreDeny, r.OnStoreError)
	assert.Equal(t, time.Minute, r.Period.D())
	r = c.RateLimits[1]
	assert.Equal(t, PerGlobal, r.Per)
	assert.Equal(t, 5, r.Burst)
	assert.Equal(t, StoreAllow, r.OnStoreError)
}

func TestRateLimitsBadRulesNamedWithTheirLines(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte(okBackend+`rate_limits:
  - tools: ["a"]
    requests: 0
    period: 0s
    burst: 0
    per: user
    on_store_error: maybe
    colour: red
  - requests: 1
    period: soon
  - tools: [""]
    requests: 1
    period: 1m
    when: {claims: {groups: []}}
`), "bad.yaml")
	require.Error(t, err)
	msg := err.Error()
	for _, want := range []string{
		`rate_limits[0].requests`, `rate_limits[0].period`, `rate_limits[0].burst`,
		`rate_limits[0].per`, `rate_limits[0].on_store_error`, `unknown key "colour"`,
		`rate_limits[1]`, `invalid duration "soon"`,
		`rate_limits[2].tools[0]`, `rate_limits[2].when.claims.groups`,
	} {
		assert.Contains(t, msg, want)
	}
	assert.Regexp(t, `bad\.yaml:\d+:.*rate_limits\[0\]\.requests`, msg, "problems carry file:line")
	assert.Contains(t, msg, "rule needs tools, prompts, resources or backends patterns")
}

func TestRateLimitBackendPatternNamesAConfiguredBackend(t *testing.T) {
	t.Parallel()
	_, err := Parse([]byte(okBackend+"rate_limits:\n  - backends: [nosuch]\n    requests: 1\n    period: 1m\n"), "bad.yaml")
	require.Error(t, err)
	assert.Contains(t, err.Error(), `unknown backend "nosuch"`)
}

// A rate limit with claims and no auth never applies: warned, not refused.
func TestRateLimitClaimRuleWithoutAuthIsWarned(t *testing.T) {
	t.Parallel()
	f, err := ParseFile([]byte(okBackend+"rate_limits:\n  - when: {claims: {groups: [free]}}\n    tools: [\"*\"]\n    requests: 1\n    period: 1m\n"), "w.yaml")
	require.NoError(t, err)
	require.Len(t, f.Warnings, 1)
	assert.Equal(t, "rate_limits[0].when.claims", f.Warnings[0].Key)
	assert.Equal(t, 5, f.Warnings[0].Line)
	assert.Contains(t, f.Warnings[0].Msg, "never matches")
}
