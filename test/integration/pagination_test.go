package integration

import (
	"context"
	"log/slog"
	"slices"
	"testing"

	"github.com/go-logr/logr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// More than one page of tools: vmcp walks the backend's pages, and serves
// its own pages of 1000 with a working nextCursor.
func TestOver1000ToolsArePagedAndAllCallable(t *testing.T) {
	const n = 1100
	be := harness.StartBackend(t, "big", harness.Stateful, func(s *mcp.Server) { harness.AddTools(s, "t", n) })
	v := harness.StartVMCP(t, nil, be.Config())
	cs := v.Connect(t, legacy, nil)

	first, err := cs.ListTools(ctx(t), nil)
	require.NoError(t, err)
	require.Len(t, first.Tools, 1000)
	require.NotEmpty(t, first.NextCursor)

	names := harness.ToolNames(t, cs)
	require.Len(t, names, n)
	distinct := slices.Clone(names)
	slices.Sort(distinct)
	distinct = slices.Compact(distinct)
	require.Len(t, distinct, n, "duplicate names in the walk")
	last := distinct[len(distinct)-1]
	require.Equal(t, "big_t1099", last)
	require.Equal(t, "t1099", callText(t, cs, last, ""))
}

// A backend whose tools/list nextCursor never advances must not hang or
// break vmcp: the walk stops, the fault is logged, the tool is listed once
// and the other backends are unaffected.
func TestNonAdvancingBackendCursorIsLoggedAndListedOnce(t *testing.T) {
	loop := harness.StartBackend(t, "loop", harness.Stateful, func(s *mcp.Server) {
		harness.AddEcho(s, "stuck")
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if method != "tools/list" {
					return next(ctx, method, req)
				}
				return &mcp.ListToolsResult{
					Tools:      []*mcp.Tool{{Name: "stuck", InputSchema: map[string]any{"type": "object"}}},
					NextCursor: "again",
				}, nil
			}
		})
	})
	other := harness.StartBackend(t, "other", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	logs := &logBuffer{}
	opts := vmcp.Options{Logger: logr.FromSlogHandler(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	v := harness.StartVMCPWithOptions(t, opts, nil, loop.Config(), other.Config())
	cs := v.Connect(t, legacy, nil)

	require.ElementsMatch(t, []string{"loop_stuck", "other_echo"}, harness.ToolNames(t, cs))
	require.Equal(t, "stuck:x", callText(t, cs, "loop_stuck", "x"))
	require.Equal(t, "echo:y", callText(t, cs, "other_echo", "y"))
	require.Contains(t, logs.String(), "pagination fault")
}
