package vmcp_test

import (
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/vmcp"
)

// reloadLimit rewrites the fixture's config with alpha and a rule of n
// alpha_echo calls per hour (n 0: no rule) and reloads it; the reload
// applies rate_limits.
func reloadLimit(t *testing.T, f *reloadFixture, n int) {
	t.Helper()
	text := fmt.Sprintf("listen: 127.0.0.1:0\nbackends:\n  - name: alpha\n    url: %s\n", f.alpha.URL)
	if n > 0 {
		text += fmt.Sprintf("rate_limits:\n  - tools: [\"alpha_echo\"]\n    requests: %d\n    period: 1h\n", n)
	}
	f.writeText(t, text)
	rec := f.v.Server.ReloadPath(f.path, vmcp.ReloadAPI)
	require.Equal(t, vmcp.ReloadOK, rec.Outcome, "ignored: %v", rec.Ignored)
	require.Equal(t, []string{"rate_limits"}, rec.Applied)
}

// rate_limits change on reload: a rule added counts from the next call, a
// reload that lowers its limit refuses the next call at once (the budget
// spent under the old limit is kept), on both revisions, and a reload
// that removes it lets calls through again.
func TestReloadAppliesRateLimitsOnBothRevisions(t *testing.T) {
	f := startReloadFixture(t)
	modern := f.v.Connect(t, "", nil)
	reloadLimit(t, f, 100)
	for _, cs := range []*mcp.ClientSession{f.cs, modern} {
		_, err := callTool(t, cs, "alpha_echo", map[string]any{"text": "x"})
		require.NoError(t, err, "within 100 per hour")
	}
	reloadLimit(t, f, 1)
	_, err := callTool(t, f.cs, "alpha_echo", map[string]any{"text": "x"})
	require.ErrorContains(t, err, "rate limit exceeded: rate_limits[0] (1 per 1h0m0s", "Legacy")
	_, err = callTool(t, modern, "alpha_echo", map[string]any{"text": "x"})
	require.ErrorContains(t, err, "rate limit exceeded: rate_limits[0] (1 per 1h0m0s", "Modern")
	reloadLimit(t, f, 0)
	for _, cs := range []*mcp.ClientSession{f.cs, modern} {
		_, err = callTool(t, cs, "alpha_echo", map[string]any{"text": "x"})
		require.NoError(t, err, "the rule is gone")
	}
}
