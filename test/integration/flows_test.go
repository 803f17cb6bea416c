package integration

// The flows tests prove issue 4 end to end: every server-to-client message
// a backend sends for a Legacy (2025-11-25) client session reaches that
// client, and only it, at the right time. Helpers are in
// flows_helpers_test.go and the backend tools in flows_tools_test.go.

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestListChangedOncePerSessionPerChange pins missing and duplicated
// tools/list_changed: a tool added to a backend at run time (Stateful and
// Stateless backends, while both sessions hold backend sessions to both)
// makes each Legacy session's handler fire once, and the list it then
// fetches has the new prefixed tool. Each notification's handler snapshots
// the list, so a duplicate shows as two notifications before the next
// change's (sentinel) one.
func TestListChangedOncePerSessionPerChange(t *testing.T) {
	alpha := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	beta := harness.StartBackend(t, "beta", harness.Stateless, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := harness.StartVMCP(t, nil, alpha.Config(), beta.Config())
	awaitTools(t, v, "alpha_echo", "beta_echo")

	type session struct {
		name  string
		cs    *mcp.ClientSession
		lists *recorder[[]string] // the tool list fetched by each notification's handler
	}
	var sessions []*session
	for _, name := range []string{"A", "B"} {
		s := &session{name: name, lists: &recorder[[]string]{}}
		s.cs = v.Connect(t, legacyVersion, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{},
			ToolListChangedHandler: func(ctx context.Context, r *mcp.ToolListChangedRequest) {
				res, err := r.Session.ListTools(ctx, nil)
				var names []string
				if err == nil {
					for _, tool := range res.Tools {
						names = append(names, tool.Name)
					}
				}
				s.lists.add(names)
			},
		})
		for _, tool := range []string{"alpha_echo", "beta_echo"} { // open both backend sessions
			_, err := s.cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"text": "x"}})
			require.NoError(t, err)
		}
		sessions = append(sessions, s)
	}
	for _, s := range sessions {
		require.Empty(t, s.lists.all(), "%s: list_changed before any change", s.name)
	}

	// Three changes, one after the other; the n-th notification (0-based
	// index n) must be the first to list the n-th change's tool.
	changes := []struct {
		backend *harness.Backend
		tool    string
	}{{alpha, "added1"}, {beta, "added2"}, {alpha, "added3"}}
	for n, ch := range changes {
		ch.backend.AwaitGETStreams(t, flowWait) // else the go-sdk drops a list_changed sent before vmcp's GET streams are connected
		harness.AddEcho(ch.backend.Server, ch.tool)
		want := ch.backend.Name + "_" + ch.tool
		for _, s := range sessions {
			require.True(t, s.lists.await(func(ls [][]string) bool {
				return slices.ContainsFunc(ls, func(l []string) bool { return slices.Contains(l, want) })
			}), "%s: no list_changed after %s was added (%d notifications)", s.name, want, len(s.lists.all()))
			lists := s.lists.all()
			first := slices.IndexFunc(lists, func(l []string) bool { return slices.Contains(l, want) })
			require.Equal(t, n, first, "%s: %d notification(s) before the one for change %d (%s): %v", s.name, first, n+1, want, lists)
			require.Contains(t, harness.ToolNames(t, s.cs), want, "%s: next tools/list", s.name)
		}
	}
	for _, s := range sessions {
		res, err := s.cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: "beta_added2", Arguments: map[string]any{"text": "hi"}})
		require.Equal(t, "added2:hi", flowText(res, err), "%s: calling the added tool", s.name)
	}
}

// TestSetLevelAppliesPerSession pins a shared log level: session A sets
// "debug" and session B "error" on the same backend (Stateful: forwarded
// logging/setLevel; Stateless: the per-request _meta log level); a tool
// logging debug, info and a final error reaches A in full, and B only the
// error. B then lowers its level to "info" on its open backend session
// and gets info and error but still no debug.
func TestSetLevelAppliesPerSession(t *testing.T) {
	for _, mode := range []harness.Mode{harness.Stateful, harness.Stateless} {
		t.Run(mode.String(), func(t *testing.T) {
			b := harness.StartBackend(t, "b", mode, func(s *mcp.Server) { addLogTool(s, "logs") })
			v := harness.StartVMCP(t, nil, b.Config())
			awaitTools(t, v, "b_logs")
			a := connectFlow(t, v, "A", nil)
			bb := connectFlow(t, v, "B", nil)
			require.NoError(t, a.cs.SetLoggingLevel(flowCtx(t), &mcp.SetLoggingLevelParams{Level: "debug"}))
			require.NoError(t, bb.cs.SetLoggingLevel(flowCtx(t), &mcp.SetLoggingLevelParams{Level: "error"}))

			// levels calls the log tool (3 × (1 debug + 1 info), then an
			// error) and returns the levels c received for that call, in
			// order, once its error tail arrived.
			levels := func(c *flowClient, marker string) []string {
				res, err := c.call(flowCtx(t), "b_logs", map[string]any{"marker": marker, "n": 3, "debug": 1, "tail": true}, nil)
				if !assert.Equal(t, "logged:"+marker, flowText(res, err)) {
					return nil
				}
				isTail := func(p *mcp.LoggingMessageParams) bool {
					m, _ := logMarker(p)
					return m == marker && p.Level == "error"
				}
				if !assert.True(t, c.logs.await(func(ps []*mcp.LoggingMessageParams) bool { return slices.ContainsFunc(ps, isTail) }),
					"%s: the error log of %s never arrived", c.name, marker) {
					return nil
				}
				var out []string
				for _, p := range c.logs.all() {
					m, _ := logMarker(p)
					assert.True(t, strings.HasPrefix(m, c.name+"-"), "%s got %v", c.name, p.Data)
					if m == marker {
						out = append(out, string(p.Level))
					}
				}
				return out
			}
			full := []string{"debug", "info", "debug", "info", "debug", "info", "error"}
			for round := range 10 { // concurrent calls: the levels must not mix
				var wg sync.WaitGroup
				var gotA, gotB []string
				wg.Go(func() { gotA = levels(a, fmt.Sprintf("A-%d", round)) })
				wg.Go(func() { gotB = levels(bb, fmt.Sprintf("B-%d", round)) })
				wg.Wait()
				require.Equal(t, full, gotA, "A (debug): the whole call, in order")
				require.Equal(t, []string{"error"}, gotB, "B (error): only the error")
			}
			require.Len(t, a.logs.all(), 10*len(full), "A: log messages in all")
			require.Len(t, bb.logs.all(), 10, "B: log messages in all")

			require.NoError(t, bb.cs.SetLoggingLevel(flowCtx(t), &mcp.SetLoggingLevelParams{Level: "info"}))
			require.Equal(t, []string{"info", "info", "info", "error"}, levels(bb, "B-info"), "B after setLevel info")
			require.Equal(t, full, levels(a, "A-last"), "A still at debug")
		})
	}
}
