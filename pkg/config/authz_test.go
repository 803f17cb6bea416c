package config

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestAuthorizationRules(t *testing.T) {
	tests := []struct {
		name string
		src  string
		key  string
		line int
		msg  string
	}{
		{"empty key", "authorization:\n", "authorization.rules", 4, "at least one rule"},
		{"no rules", "authorization:\n  rules: []\n", "authorization.rules", 5, "at least one rule"},
		{"rule without items", "authorization:\n  rules:\n    - when: {claims: {groups: [admin]}}\n", "authorization.rules[0]", 6, "needs allow or deny"},
		{"claim scalar", "authorization:\n  rules:\n    - when: {claims: {groups: admin}}\n      allow: {tools: [\"*\"]}\n", "authorization.rules[0].when.claims.groups", 6, "want a list"},
		{"claim no values", "authorization:\n  rules:\n    - when: {claims: {groups: []}}\n      allow: {tools: [\"*\"]}\n", "authorization.rules[0].when.claims.groups", 6, "at least one accepted value"},
		{"empty pattern", "authorization:\n  rules:\n    - allow:\n        tools: [\"\"]\n", "authorization.rules[0].allow.tools[0]", 7, "must not be empty"},
		{"duplicate pattern", "authorization:\n  rules:\n    - deny:\n        prompts: [a, a]\n", "authorization.rules[0].deny.prompts[1]", 7, `duplicate pattern "a"`},
		{"unknown backend", "authorization:\n  rules:\n    - allow:\n        backends: [zz]\n", "authorization.rules[0].allow.backends[0]", 7, `unknown backend "zz"`},
		{"unknown key", "authorization:\n  rules:\n    - allow:\n        tool: [x]\n", "authorization.rules[0].allow.tool", 7, `unknown key "tool"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ps := problemsOf(t, okBackend+tt.src)
			require.Len(t, ps, 1, "problems: %v", ps)
			assert.Equal(t, tt.key, ps[0].Key)
			assert.Equal(t, tt.line, ps[0].Line)
			assert.Contains(t, ps[0].Msg, tt.msg)
		})
	}
}

func TestAuthorizationValid(t *testing.T) {
	c, err := Parse([]byte(okBackend+`authorization:
  rules:
    - when: {claims: {groups: [admin]}}
      allow: {backends: ["*"]}
    - allow: {backends: [a], tools: ["a_*"], resources: ["file:///*"]}
      deny: {tools: [a_secret]}
`), "ok.yaml")
	require.NoError(t, err)
	require.NotNil(t, c.Authorization)
	require.Len(t, c.Authorization.Rules, 2)
	assert.Equal(t, []string{"admin"}, c.Authorization.Rules[0].When.Claims["groups"])
	assert.Equal(t, []string{"a_secret"}, c.Authorization.Rules[1].Deny.Tools)

	c, err = Parse([]byte(okBackend), "ok.yaml")
	require.NoError(t, err)
	assert.Nil(t, c.Authorization, "no authorization key: allow all")
}

// A claims rule without auth never matches (every client is anonymous):
// warned, with its line, not refused.
func TestClaimRuleWithoutAuthIsWarned(t *testing.T) {
	src := okBackend + "authorization:\n  rules:\n    - when: {claims: {groups: [admin]}}\n      allow: {backends: [\"*\"]}\n    - allow: {tools: [a_x]}\n"
	f, err := ParseFile([]byte(src), "w.yaml")
	require.NoError(t, err)
	require.Len(t, f.Warnings, 1)
	assert.Equal(t, 6, f.Warnings[0].Line)
	assert.Equal(t, "authorization.rules[0].when.claims", f.Warnings[0].Key)
	assert.Contains(t, f.Warnings[0].Msg, "never matches")

	f, err = ParseFile([]byte(src+authOK("")), "w.yaml")
	require.NoError(t, err)
	assert.Empty(t, f.Warnings, "with auth the rule can match")
}
