package integration

// Tool search (issue 31): search_tools and call_tool on both revisions,
// through real go-sdk clients and in-process backends.

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// searchRevisions are the client revisions every tool search test runs on.
var searchRevisions = []struct{ name, version string }{{"legacy", legacyVersion}, {"modern", ""}}

// searchBackends are a Legacy (stateful) backend with a file reader that
// reports progress and a Modern (stateless) weather backend.
func searchBackends(t *testing.T) []config.Backend {
	files := harness.StartBackend(t, "files", harness.Stateful, func(s *mcp.Server) {
		addProgressTool(s, "read_file")
		s.AddTool(&mcp.Tool{Name: "delete_directory", Description: "Delete a directory and everything in it.", InputSchema: flowSchema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return flowResult("deleted"), nil
			})
	})
	weather := harness.StartBackend(t, "weather", harness.Stateless, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "get_forecast", Description: "Weather forecast for a city: temperature and rain.", InputSchema: map[string]any{
			"type": "object", "properties": map[string]any{"city": map[string]any{"type": "string", "description": "City name"}}}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return flowResult("sunny"), nil
			})
	})
	return []config.Backend{files.Config(), weather.Config()}
}

func withToolSearch(list string) func(*config.Config) {
	return func(c *config.Config) {
		c.ToolSearch.Enabled = true
		c.ToolSearch.List = list
	}
}

// searched is a search_tools result as a client reads it.
type searched struct {
	Tools []struct {
		Name        string         `json:"name"`
		Description string         `json:"description"`
		InputSchema map[string]any `json:"inputSchema"`
		Backend     string         `json:"backend"`
	} `json:"tools"`
}

// search calls search_tools and checks that the text content is the
// structuredContent's JSON.
func search(t *testing.T, cs *mcp.ClientSession, query string, limit int) searched {
	t.Helper()
	args := map[string]any{"query": query}
	if limit > 0 {
		args["limit"] = limit
	}
	res, err := cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: "search_tools", Arguments: args})
	require.NoError(t, err)
	require.False(t, res.IsError, flowText(res, nil))
	var fromText, fromStructured searched
	require.NoError(t, json.Unmarshal([]byte(flowText(res, nil)), &fromText))
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &fromStructured))
	require.Equal(t, fromStructured, fromText, "text and structuredContent differ")
	return fromStructured
}

func names(s searched) []string {
	var out []string
	for _, x := range s.Tools {
		out = append(out, x.Name)
	}
	return out
}

// TestToolSearchFindsAndCallToolRunsWithProgress: with list: search_only
// the list is the two tools; search finds each backend's tool by a user's
// words with its schema and backend; call_tool runs a found tool with its
// progress reaching the caller under its own token; a direct call of a
// tool the list does not show still works.
func TestToolSearchFindsAndCallToolRunsWithProgress(t *testing.T) {
	t.Parallel()
	v := harness.StartVMCP(t, withToolSearch(config.ToolListSearchOnly), searchBackends(t)...)
	for _, rev := range searchRevisions {
		t.Run(rev.name, func(t *testing.T) {
			var progress recorder[*mcp.ProgressNotificationParams]
			cs := v.Connect(t, rev.version, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
				ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { progress.add(r.Params) }})
			assert.Equal(t, []string{"call_tool", "search_tools"}, harness.ToolNames(t, cs))

			got := search(t, cs, "will it rain in Paris tomorrow?", 0)
			require.NotEmpty(t, got.Tools)
			assert.Equal(t, "weather_get_forecast", got.Tools[0].Name)
			assert.Equal(t, "weather", got.Tools[0].Backend)
			assert.Contains(t, got.Tools[0].InputSchema["properties"], "city")
			assert.Equal(t, "files_delete_directory", search(t, cs, "remove a folder", 1).Tools[0].Name)

			marker := "search-" + rev.name
			res, err := cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: "call_tool", Meta: mcp.Meta{"progressToken": marker},
				Arguments: map[string]any{"name": "files_read_file", "arguments": map[string]any{"marker": marker, "n": 3}}})
			assert.Equal(t, "progressed:"+marker, flowText(res, err))
			assert.True(t, progress.await(func(ps []*mcp.ProgressNotificationParams) bool { return len(progressFor(ps, marker)) == 3 }),
				"call_tool's progress never reached the caller")

			res, err = cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: "weather_get_forecast", Arguments: map[string]any{"city": "Paris"}})
			assert.Equal(t, "sunny", flowText(res, err), "a direct call of an unlisted tool")
		})
	}
}

// TestToolSearchListAllShowsEveryTool: list: all lists the two tools
// beside the backends' own.
func TestToolSearchListAllShowsEveryTool(t *testing.T) {
	t.Parallel()
	v := harness.StartVMCP(t, withToolSearch(config.ToolListAll), searchBackends(t)...)
	for _, rev := range searchRevisions {
		cs := v.Connect(t, rev.version, nil)
		assert.Equal(t, []string{"call_tool", "files_delete_directory", "files_read_file", "search_tools", "weather_get_forecast"},
			harness.ToolNames(t, cs), rev.name)
	}
}

// TestToolSearchNeverShowsOrCallsWhatThePolicyHides: a principal allowed
// only files_* tools never finds weather_get_forecast, however exactly it
// asks, and call_tool of it fails as an unknown tool does.
func TestToolSearchNeverShowsOrCallsWhatThePolicyHides(t *testing.T) {
	t.Parallel()
	v := harness.StartVMCP(t, func(c *config.Config) {
		withToolSearch(config.ToolListSearchOnly)(c)
		c.Authorization = &config.Authorization{Rules: []config.AuthzRule{{Allow: &config.AuthzItems{Tools: []string{"files_*"}}}}}
	}, searchBackends(t)...)
	for _, rev := range searchRevisions {
		t.Run(rev.name, func(t *testing.T) {
			cs := v.Connect(t, rev.version, nil)
			lt, err := cs.ListTools(flowCtx(t), nil)
			require.NoError(t, err)
			require.Len(t, lt.Tools, 2)
			assert.NotContains(t, lt.Tools[1].Description, "weather", "a backend the policy hides, named in search_tools' description")
			for _, q := range []string{"weather forecast city", "get_forecast", "weather_get_forecast"} {
				assert.NotContains(t, names(search(t, cs, q, 50)), "weather_get_forecast", q)
			}
			assert.Contains(t, names(search(t, cs, "read a file", 5)), "files_read_file")
			_, err = cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: "call_tool",
				Arguments: map[string]any{"name": "weather_get_forecast", "arguments": map[string]any{"city": "Paris"}}})
			require.Error(t, err)
			assert.Contains(t, err.Error(), `unknown tool "weather_get_forecast"`)
		})
	}
}

// TestToolSearchFindsABackendAddedByReload: a backend added by reload is
// found by a client that never lists again.
func TestToolSearchFindsABackendAddedByReload(t *testing.T) {
	t.Parallel()
	bs := searchBackends(t)
	v := harness.StartVMCP(t, withToolSearch(config.ToolListSearchOnly), bs...)
	var sessions []*mcp.ClientSession
	for _, rev := range searchRevisions {
		cs := v.Connect(t, rev.version, nil)
		harness.ToolNames(t, cs)
		assert.NotContains(t, names(search(t, cs, "translate text", 5)), "lang_translate", rev.name)
		sessions = append(sessions, cs)
	}
	lang := harness.StartBackend(t, "lang", harness.Stateless, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "translate", Description: "Translate text into another language.", InputSchema: flowSchema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return flowResult("bonjour"), nil
			})
	})
	rec := v.Server.Reload(withBackends(v.Config, append(slices.Clone(bs), lang.Config())...), vmcp.ReloadAPI)
	require.Equal(t, vmcp.ReloadOK, rec.Outcome, fmt.Sprint(rec.Errors))
	for i, cs := range sessions {
		got := search(t, cs, "translate text into French", 3)
		require.NotEmpty(t, got.Tools, searchRevisions[i].name)
		assert.Equal(t, "lang_translate", got.Tools[0].Name, searchRevisions[i].name)
	}
}

// TestToolSearchOnlyStillServesUnlistedStdioToolsOnLegacy: a Legacy call
// to a stdio backend goes through the go-sdk server, whose registry must
// hold every tool even when tools/list shows only the two: a direct call
// and call_tool of the unlisted stdio tool both run it.
func TestToolSearchOnlyStillServesUnlistedStdioToolsOnLegacy(t *testing.T) {
	t.Parallel()
	v := harness.StartVMCP(t, withToolSearch(config.ToolListSearchOnly), harness.StdioBackend(t, "io"))
	cs := v.Connect(t, legacyVersion, nil)
	assert.Equal(t, []string{"call_tool", "search_tools"}, harness.ToolNames(t, cs))
	res, err := cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: "io_echo", Arguments: map[string]any{"text": "direct"}})
	assert.Equal(t, "direct", flowText(res, err))
	res, err = cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: "call_tool",
		Arguments: map[string]any{"name": "io_echo", "arguments": map[string]any{"text": "via call_tool"}}})
	assert.Equal(t, "via call_tool", flowText(res, err))
}
