package integration

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// modernRevision is the protocol revision a default go-sdk client negotiates.
const modernRevision = "2026-07-28"

// modernCtx bounds one test's calls.
func modernCtx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// eraBackends starts a Legacy (stateful) backend "old" and a Modern
// (stateless) backend "new", each with tools echo and shout and prompt hi.
func eraBackends(t *testing.T) (*harness.Backend, *harness.Backend) {
	setup := func(s *mcp.Server) {
		harness.AddEcho(s, "echo")
		harness.AddEcho(s, "shout")
		s.AddPrompt(&mcp.Prompt{Name: "hi"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
		})
	}
	return harness.StartBackend(t, "old", harness.Stateful, setup), harness.StartBackend(t, "new", harness.Stateless, setup)
}

// A default go-sdk client now negotiates 2026-07-28 with vmcp: stateless,
// so it has no session id, and vmcp names itself in the discover result.
func TestModernDefaultClientNegotiatesModern(t *testing.T) {
	old, nw := eraBackends(t)
	v := harness.StartVMCP(t, nil, old.Config(), nw.Config())
	cs := v.Connect(t, "", nil)

	init := cs.InitializeResult()
	require.Equal(t, modernRevision, init.ProtocolVersion)
	require.Empty(t, cs.ID(), "a Modern client has no session")
	require.NotNil(t, init.ServerInfo)
	require.Equal(t, "vmcp", init.ServerInfo.Name)
	require.NotNil(t, init.Capabilities.Tools)
	require.True(t, init.Capabilities.Tools.ListChanged, "list changes are delivered on subscriptions/listen")

	res, err := cs.GetPrompt(modernCtx(t), &mcp.GetPromptParams{Name: "new_hi"})
	require.NoError(t, err)
	require.Len(t, res.Messages, 1)
}

// A Modern client and a Legacy-pinned client, side by side over the same
// two backends, see the same tools and get the same results, concurrently.
func TestModernAndLegacyClientsSideBySide(t *testing.T) {
	old, nw := eraBackends(t)
	v := harness.StartVMCP(t, nil, old.Config(), nw.Config())
	modern := v.Connect(t, "", nil)
	legacy := v.Connect(t, "2025-11-25", nil)
	require.Equal(t, modernRevision, modern.InitializeResult().ProtocolVersion)
	require.Equal(t, "2025-11-25", legacy.InitializeResult().ProtocolVersion)
	require.NotEmpty(t, legacy.ID())

	tools := harness.ToolNames(t, modern)
	require.Equal(t, []string{"new_echo", "new_shout", "old_echo", "old_shout"}, tools)
	require.Equal(t, tools, harness.ToolNames(t, legacy))

	var wg sync.WaitGroup
	results := make([][2]*mcp.CallToolResult, len(tools))
	for i, name := range tools {
		for j, cs := range []*mcp.ClientSession{modern, legacy} {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := cs.CallTool(modernCtx(t), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": "same"}})
				if err != nil {
					t.Errorf("%s over client %d: %v", name, j, err)
					return
				}
				results[i][j] = res
			}()
		}
	}
	wg.Wait()
	for i, name := range tools {
		m, l := results[i][0], results[i][1]
		require.NotNil(t, m, name)
		require.NotNil(t, l, name)
		require.Equal(t, l.Content, m.Content, name)
		require.Equal(t, l.IsError, m.IsError, name)
		require.Contains(t, harness.Text(t, m), ":same")
	}
}

// 1100 tools over a Modern client: the first page is exactly 1000 with a
// cursor, the walk yields 1100 distinct names, and the last one is callable.
func TestModernOver1000Tools(t *testing.T) {
	const n = 1100
	be := harness.StartBackend(t, "big", harness.Stateless, func(s *mcp.Server) { harness.AddTools(s, "t", n) })
	v := harness.StartVMCP(t, nil, be.Config())
	cs := v.Connect(t, "", nil)
	require.Equal(t, modernRevision, cs.InitializeResult().ProtocolVersion)

	first, err := cs.ListTools(modernCtx(t), nil)
	require.NoError(t, err)
	require.Len(t, first.Tools, 1000)
	require.NotEmpty(t, first.NextCursor)

	names := harness.ToolNames(t, cs)
	require.Len(t, names, n)
	distinct := slices.Compact(slices.Sorted(slices.Values(names)))
	require.Len(t, distinct, n, "duplicate names in the walk")
	last := fmt.Sprintf("big_t%04d", n-1)
	require.Equal(t, last, distinct[n-1])
	res, err := cs.CallTool(modernCtx(t), &mcp.CallToolParams{Name: last})
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("t%04d", n-1), harness.Text(t, res))
}
