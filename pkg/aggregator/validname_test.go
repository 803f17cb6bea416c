package aggregator

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/vmcp/vmcp/pkg/config"
)

func TestValidNameRule(t *testing.T) {
	hash := func(s string) string { h := sha256.Sum256([]byte(s)); return hex.EncodeToString(h[:])[:8] }
	long := strings.Repeat("x", 130)
	for _, c := range []struct{ in, want string }{
		{"search", "search"},
		{"a.b-c_D9", "a.b-c_D9"},
		{strings.Repeat("y", 128), strings.Repeat("y", 128)},
		{long, strings.Repeat("x", 119) + "_" + hash(long)},
		{"get weather", "get_weather_" + hash("get weather")},
		{"ns/tool:v2", "ns_tool_v2_" + hash("ns/tool:v2")},
		{"café", "caf__" + hash("café")}, // one '_' per character, not per byte
		{"", "_" + hash("")},
	} {
		got := ValidName(c.in)
		assert.Equal(t, c.want, got, "ValidName(%q)", c.in)
		assert.True(t, validName(got), "ValidName(%q) = %q is not valid", c.in, got)
	}
}

// TestLongToolNameIsListedValidStableAndRoutedToTheOriginal pins issue 13's
// 130-character name: it was listed and callable as is (only an SDK error
// line in the log). It is listed at 128 characters, two names sharing their
// first 119 characters stay apart, the name is the same in every build, and
// the routing table maps it to the backend's original name.
func TestLongToolNameIsListedValidStableAndRoutedToTheOriginal(t *testing.T) {
	a := strings.Repeat("a", 126) + "_one"
	b := strings.Repeat("a", 126) + "_two"
	inv := []Inventory{{Backend: "be", Tools: tools(a, b, "ok"), Prompts: prompts("bad prompt")}}
	p := Policy{Strategy: config.StrategyPrefix, PrefixFormat: DefaultPrefixFormat, Order: []string{"be"}}
	first, _, err := Build(p, inv)
	require.NoError(t, err)
	again, _, err := Build(p, inv)
	require.NoError(t, err)
	names := toolNames(first)
	require.Len(t, names, 3)
	assert.Equal(t, names, toolNames(again), "names differ between builds")
	assert.Contains(t, names, "be_ok")
	routed := map[string]bool{}
	for _, n := range names {
		assert.LessOrEqual(t, len(n), MaxNameLength, n)
		assert.True(t, validName(n), n)
		_, r, ok := first.Tool(n)
		require.True(t, ok, n)
		assert.Equal(t, "be", r.Backend)
		routed[r.Name] = true
	}
	assert.Equal(t, map[string]bool{a: true, b: true, "ok": true}, routed)
	pn := promptNames(first)
	require.Len(t, pn, 1)
	assert.Equal(t, ValidName("be_bad prompt"), pn[0])
	_, r, ok := first.Prompt(pn[0])
	require.True(t, ok)
	assert.Equal(t, "bad prompt", r.Name)
}
