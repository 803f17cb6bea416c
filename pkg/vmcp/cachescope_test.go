package vmcp_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
)

// TestAuthenticatedModernListCachedAsPublic: an authenticated principal's
// Modern list (its own view: authorization rules, per-principal backends)
// said cacheScope "public", so a shared cache could serve it to another
// principal; it is "private" now, on every list verb.
func TestAuthenticatedModernListCachedAsPublic(t *testing.T) {
	t.Parallel()
	idp := authtest.Start(t, audience)
	v, _ := protected(t, idp, nil)
	cs, _, err := connect(t, v.URL, idp.Token(t, "alice", "mcp:tools"), "", nil)
	require.NoError(t, err)
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	require.NotEmpty(t, tools.Tools)
	require.Equal(t, "private", tools.CacheScope, "tools/list")
	prompts, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{})
	if err == nil {
		require.Equal(t, "private", prompts.CacheScope, "prompts/list")
	}
	resources, err := cs.ListResources(ctx, &mcp.ListResourcesParams{})
	if err == nil {
		require.Equal(t, "private", resources.CacheScope, "resources/list")
	}
}
