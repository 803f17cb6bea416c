package integration

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// Two backends offering the same tool names: the prefix strategy
// advertises both under {backend}_{name} and routes each to its backend.
func TestPrefixMergeRoutesEachPrefixedToolToItsBackend(t *testing.T) {
	alpha := backendWith(t, "alpha", "search", "fetch")
	beta := backendWith(t, "beta", "search", "fetch")
	v := harness.StartVMCP(t, nil, alpha.Config(), beta.Config())
	cs := v.Connect(t, legacy, nil)

	require.ElementsMatch(t, []string{"alpha_search", "beta_search", "alpha_fetch", "beta_fetch"}, harness.ToolNames(t, cs))
	for _, c := range []struct{ tool, want string }{
		{"alpha_search", "alpha/search:q"},
		{"beta_search", "beta/search:q"},
		{"alpha_fetch", "alpha/fetch:q"},
		{"beta_fetch", "beta/fetch:q"},
	} {
		require.Equal(t, c.want, callText(t, cs, c.tool, "q"), c.tool)
	}
}

// The priority strategy keeps bare names for the first backend and
// prefixes the other's conflicting names.
func TestPriorityStrategyKeepsBareNamesForFirstBackend(t *testing.T) {
	alpha := backendWith(t, "alpha", "search", "fetch")
	beta := backendWith(t, "beta", "search", "fetch")
	v := harness.StartVMCP(t, func(c *config.Config) {
		c.Aggregation.ConflictResolution = config.StrategyPriority
		c.Aggregation.Priority = []string{"alpha", "beta"}
	}, alpha.Config(), beta.Config())
	cs := v.Connect(t, legacy, nil)

	require.ElementsMatch(t, []string{"search", "fetch", "beta_search", "beta_fetch"}, harness.ToolNames(t, cs))
	require.Equal(t, "alpha/search:q", callText(t, cs, "search", "q"))
	require.Equal(t, "alpha/fetch:q", callText(t, cs, "fetch", "q"))
	require.Equal(t, "beta/search:q", callText(t, cs, "beta_search", "q"))
	require.Equal(t, "beta/fetch:q", callText(t, cs, "beta_fetch", "q"))
}

// A go-sdk client with default options (it tries 2026-07-28 first) can
// connect, list and call. The negotiated version is deliberately not
// asserted: Modern support is being added.
func TestDefaultClientConnectsAndCalls(t *testing.T) {
	alpha := harness.StartBackend(t, "alpha", harness.Stateless, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := harness.StartVMCP(t, nil, alpha.Config())
	cs := v.Connect(t, "", nil)

	require.Equal(t, []string{"alpha_echo"}, harness.ToolNames(t, cs))
	require.Equal(t, "echo:hello", callText(t, cs, "alpha_echo", "hello"))
}
