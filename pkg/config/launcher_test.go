package config

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLauncherDetection(t *testing.T) {
	for _, tt := range []struct {
		cmd  string
		args string // split on spaces
		want string // "" for none
	}{
		{"npx", "-y @modelcontextprotocol/server-filesystem /tmp", "npx"},
		{"/usr/local/bin/npx", "server", "npx"},
		{`C:\Program Files\nodejs\npx.cmd`, "-y x", "npx"},
		{"cmd", "/c npx -y x", "npx"},
		{"cmd", "/C uvx mcp-server-git", "uvx"},
		{"npm", "exec -- x", "npm exec"},
		{"npm", "x x", "npm x"},
		{"npm", "start", ""},
		{"pnpx", "x", "pnpx"},
		{"pnpm", "dlx x", "pnpm dlx"},
		{"pnpm", "exec x", ""},
		{"yarn", "dlx x", "yarn dlx"},
		{"yarn", "start", ""},
		{"bunx", "x", "bunx"},
		{"bun", "x x", "bun x"},
		{"bun", "run server.ts", ""},
		{"uvx", "mcp-server-fetch", "uvx"},
		{"uv", "tool run mcp-server-fetch", "uv tool run"},
		{"uv", "--directory /srv/weather run weather.py", "uv run"},
		{"uv", "pip install x", ""},
		{"pipx", "run mcp-server-time", "pipx run"},
		{"pipx", "install x", ""},
		{"dnx", "NuGet.Mcp.Server --yes", "dnx"},
		{"docker", "run -i --rm mcp/fetch", "docker run"},
		{"docker", "--context prod run -i mcp/fetch", "docker run"},
		{"docker", "container run -i mcp/fetch", "docker container run"},
		{"docker", "exec -i box server", ""},
		{"docker", "--context run exec -i box", ""}, // "run" is the context's name
		{"podman", "run -i --rm mcp/fetch", "podman run"},
		{"nerdctl", "run -i mcp/fetch", "nerdctl run"},
		{"deno", "run -A https://deno.land/x/server.ts", "deno run"},
		{"deno", "run -A npm:@scope/server", "deno run"},
		{"deno", "run -A ./server.ts", ""},
		{"go", "run github.com/example/mcp@latest", "go run"},
		{"go", "run ./cmd/server", ""},
		{"node", "server.js", ""},
		{"python", "-m server", ""},
		{"/opt/npx-like/server", "", ""},
		{"npx", "", "npx"},
	} {
		var args []string
		if tt.args != "" {
			args = strings.Split(tt.args, " ")
		}
		assert.Equal(t, tt.want, launcherOf(tt.cmd, args), "%s %s", tt.cmd, tt.args)
	}
}

// Serving a Claude Desktop config of npx servers started one npx process
// per Legacy session and backend, and nothing said so: each launcher
// backend with the default isolation gets a note; one that writes its
// isolation, and HTTP or plain stdio backends, do not.
func TestLauncherBackendsGetANoteUnlessIsolationIsWritten(t *testing.T) {
	fakeLauncherPath(t)
	src := `backends:
  - name: a
    command: npx
    args: [-y, server-a]
  - name: b
    command: npx
    isolation: shared
  - name: c
    command: npx
    isolation: session
  - name: d
    url: http://127.0.0.1:9/mcp
  - name: e
    command: /bin/sh
  - name: f
    command: docker
    args: [run, -i, --rm, mcp/fetch]
`
	f, err := ParseFile([]byte(src), "n.yaml")
	require.NoError(t, err)
	assert.Empty(t, f.Warnings)
	require.Len(t, f.Notes, 1+1, "%v", f.Notes)
	assert.Equal(t, Problem{File: "n.yaml", Line: 3, Key: "backends[0].command", Msg: launcherNote("npx"), Severity: SeverityNote}, f.Notes[0])
	assert.Equal(t, 16, f.Notes[1].Line)
	assert.Contains(t, f.Notes[1].Msg, "runs through docker run: each Legacy client session starts its own process")
	assert.Contains(t, f.Notes[1].Labelled(), `n.yaml:16: backends[5].command: note: runs through docker run`)
	for _, want := range []string{"100 MB or more", "seconds of start-up", `set "isolation: shared"`, "sampling, elicitation, roots", "max_processes", `"isolation: session" keeps this`} {
		assert.Contains(t, f.Notes[0].Msg, want)
	}
}
