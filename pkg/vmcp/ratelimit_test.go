package vmcp_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/vmcp"
)

// rate_limits cannot change on reload: reported and left as it was (no
// limiter appears in a running vmcp).
func TestReloadLeavesRateLimitsAsTheyWere(t *testing.T) {
	f := startReloadFixture(t)
	text := fmt.Sprintf("backends:\n  - name: alpha\n    url: %s\nrate_limits:\n  - tools: [\"*\"]\n    requests: 1\n    period: 1h\n", f.alpha.URL)
	f.writeText(t, text)
	rec := f.v.Server.ReloadPath(f.path, vmcp.ReloadAPI)
	require.Equal(t, vmcp.ReloadPartial, rec.Outcome)
	require.Contains(t, rec.Ignored, "rate_limits: cannot change while vmcp runs")
	for range 3 {
		_, err := callTool(t, f.cs, "alpha_echo", map[string]any{"text": "x"})
		require.NoError(t, err, "no limit was applied")
	}
}
