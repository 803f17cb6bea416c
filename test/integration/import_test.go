package integration

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// The configs users already have, served as they are and through
// `vmcp import`: a Claude Desktop file and a VS Code file, each with two
// stdio servers (the harness's stdio server, built with go build) and one
// streamable HTTP server (go-sdk on httptest), with names that are not
// valid backend names. A real go-sdk client of each revision lists and
// calls the tools of all three.

const claudeDesktopConfig = `{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "Local Files": {"command": %[1]q, "args": [], "env": {"STDIOSERVER_LEGACY": "1"}},
    "notes": {"command": %[1]q},
    "Web Search": {"url": %[2]q, "headers": {"X-Import-Test": "${IMPORT_TEST_KEY}"}}
  }
}
`

const vscodeConfig = `{
  // .vscode/mcp.json
  "inputs": [{"type": "promptString", "id": "unused", "description": "not referenced"}],
  "servers": {
    "Local Files": {"type": "stdio", "command": %[1]q, "env": {"STDIOSERVER_LEGACY": "1"}},
    "notes": {"type": "stdio", "command": %[1]q, "args": []},
    "Web Search": {"type": "http", "url": %[2]q, "headers": {"X-Import-Test": "${env:IMPORT_TEST_KEY}"}},
  }
}
`

func TestClientConfigsServedDirectlyAndThroughImport(t *testing.T) {
	stdioBin := harness.StdioBackend(t, "unused").Command
	web := harness.StartBackend(t, "web", harness.Stateless, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "header", InputSchema: map[string]any{"type": "object"}},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "web:" + req.Extra.Header.Get("X-Import-Test")}}}, nil
			})
	})
	t.Setenv("IMPORT_TEST_KEY", "k-123")

	for _, tc := range []struct {
		name, file, src string
		format          config.Format
	}{
		{"claude desktop", "claude_desktop_config.json", claudeDesktopConfig, config.FormatMCPServers},
		{"vscode", "mcp.json", vscodeConfig, config.FormatVSCode},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), tc.file)
			require.NoError(t, os.WriteFile(path, fmt.Appendf(nil, tc.src, stdioBin, web.URL), 0o600))
			f, err := config.Read(path)
			require.NoError(t, err)
			require.Equal(t, tc.format, f.Format)
			assert.Empty(t, f.Warnings)
			assert.Equal(t, []config.Rename{{From: "Local Files", To: "local-files", Line: 4 + boolInt(tc.format == config.FormatVSCode)},
				{From: "Web Search", To: "web-search", Line: 6 + boolInt(tc.format == config.FormatVSCode)}}, f.Renames)
			t.Run("direct", func(t *testing.T) { checkServed(t, f.Config) })

			out, err := f.YAML()
			require.NoError(t, err)
			imported, err := config.ParseFile(out, "imported.yaml")
			require.NoError(t, err, "vmcp import output:\n%s", out)
			assert.Equal(t, config.FormatVMCP, imported.Format)
			assert.Equal(t, f.Config, imported.Config)
			t.Run("imported", func(t *testing.T) { checkServed(t, imported.Config) })
		})
	}
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkServed starts vmcp on cfg and, with a Modern and a Legacy client,
// lists the tools of the three backends and calls one of each.
func checkServed(t *testing.T, cfg *config.Config) {
	v := harness.StartVMCP(t, func(c *config.Config) { *c = *cfg })
	for _, version := range []string{"", legacy} {
		cs := v.Connect(t, version, nil)
		names := harness.ToolNames(t, cs)
		for _, want := range []string{"local-files_echo", "notes_echo", "web-search_header"} {
			assert.True(t, slices.Contains(names, want), "client %q: %s not in %v", version, want, names)
		}
		assert.Equal(t, "one", callText(t, cs, "local-files_echo", "one"))
		assert.Equal(t, "two", callText(t, cs, "notes_echo", "two"))
		assert.Equal(t, "web:k-123", callText(t, cs, "web-search_header", ""), "the header with ${VAR} reaches the HTTP backend")
		require.NoError(t, cs.Close())
	}
}
