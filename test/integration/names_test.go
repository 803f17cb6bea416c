package integration

import (
	"context"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestToolNameOver128CharactersIsShortenedAndCallable pins issue 13's
// 130-character name: listed and callable as is. Through vmcp it is listed
// valid and at most 128 characters, the same on every listing and for both
// revisions, and a call with it reaches the backend's tool of the original
// name, on a Legacy and on a Modern backend.
func TestToolNameOver128CharactersIsShortenedAndCallable(t *testing.T) {
	long := strings.Repeat("n", 125) + "_long" // 130 characters
	for _, mode := range []harness.Mode{harness.Stateful, harness.Stateless} {
		t.Run(mode.String(), func(t *testing.T) {
			b := harness.StartBackend(t, "b", mode, func(s *mcp.Server) {
				s.AddTool(&mcp.Tool{Name: long, InputSchema: map[string]any{"type": "object"}},
					func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
						return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "called " + req.Params.Name}}}, nil
					})
			})
			v := harness.StartVMCP(t, nil, b.Config())
			want := aggregator.ValidName("b_" + long)
			require.Len(t, want, aggregator.MaxNameLength)
			awaitTools(t, v, want)
			for _, version := range []string{legacyVersion, ""} {
				cs := v.Connect(t, version, nil)
				res, err := cs.ListTools(flowCtx(t), nil)
				require.NoError(t, err)
				require.Len(t, res.Tools, 1)
				require.Equal(t, want, res.Tools[0].Name, "version %q", version)
				got, err := cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: want})
				require.NoError(t, err, "version %q", version)
				require.False(t, got.IsError, "version %q: %v", version, got.Content)
				require.Equal(t, "called "+long, got.Content[0].(*mcp.TextContent).Text, "version %q", version)
			}
		})
	}
}
