package config

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

const claudeJSON = `{
  "globalShortcut": "Ctrl+Space",
  "mcpServers": {
    "filesystem": {
      "command": "/bin/sh",
      "args": ["-c", "exec server", "${HOME_FOR_TEST}"],
      "env": {"TOKEN": "t"}
    },
    "My GitHub": {"type": "http", "url": "https://example.com/mcp", "headers": {"Authorization": "Bearer x"}},
    "events": {"type": "sse", "url": "https://example.com/sse"},
    "plain": {"url": "https://example.com/other"},
    "old": {"command": "/bin/sh", "disabled": true, "autoApprove": ["x"]}
  }
}
`

func TestImportMCPServers(t *testing.T) {
	t.Setenv("HOME_FOR_TEST", "/home/me")
	f, err := ParseFile([]byte(claudeJSON), "claude_desktop_config.json")
	require.NoError(t, err)
	assert.Equal(t, FormatMCPServers, f.Format)
	timeout := Duration(30 * time.Second)
	assert.Equal(t, []Backend{
		{Name: "filesystem", Command: "/bin/sh", Args: []string{"-c", "exec server", "/home/me"},
			Env: map[string]string{"TOKEN": "t"}, Transport: TransportStdio, Timeout: timeout, Isolation: IsolationSession},
		{Name: "my-github", URL: "https://example.com/mcp", Headers: map[string]string{"Authorization": "Bearer x"},
			Transport: TransportStreamableHTTP, Timeout: timeout},
		{Name: "events", URL: "https://example.com/sse", Transport: TransportSSE, Timeout: timeout},
		{Name: "plain", URL: "https://example.com/other", Transport: TransportStreamableHTTP, Timeout: timeout},
	}, f.Config.Backends)
	assert.Equal(t, []Rename{{From: "My GitHub", To: "my-github", Line: 9}}, f.Renames)
	assert.Equal(t, []string{"old"}, f.Skipped)
	assert.Equal(t, "127.0.0.1:8080", f.Config.Listen, "defaults come from the one loader")
	assert.Empty(t, f.Warnings)
}

const vscodeJSON = `{
  // .vscode/mcp.json: comments and trailing commas are allowed
  "inputs": [{"type": "promptString", "id": "tok", "password": true}],
  "servers": {
    "Files": {"type": "stdio", "command": "/bin/sh", "args": ["${env:HOME_FOR_TEST}/x"], "env": {"A": "${env:HOME_FOR_TEST}"},},
    /* remote */
    "remote": {"type": "http", "url": "https://example.com/mcp", "headers": {"X-Key": "${env:KEY_FOR_TEST}"}},
  },
}
`

func TestImportVSCode(t *testing.T) {
	t.Setenv("HOME_FOR_TEST", "/home/me")
	t.Setenv("KEY_FOR_TEST", "k")
	f, err := ParseFile([]byte(vscodeJSON), ".vscode/mcp.json")
	require.NoError(t, err)
	assert.Equal(t, FormatVSCode, f.Format)
	require.Len(t, f.Config.Backends, 2)
	b := f.Config.Backends[0]
	assert.Equal(t, "files", b.Name)
	assert.Equal(t, TransportStdio, b.Transport)
	assert.Equal(t, []string{"/home/me/x"}, b.Args, "${env:NAME} is the environment variable NAME")
	assert.Equal(t, map[string]string{"A": "/home/me"}, b.Env)
	assert.Equal(t, Backend{Name: "remote", URL: "https://example.com/mcp", Transport: TransportStreamableHTTP,
		Headers: map[string]string{"X-Key": "k"}, Timeout: Duration(30 * time.Second)}, f.Config.Backends[1])
	assert.Equal(t, []Rename{{From: "Files", To: "files", Line: 5}}, f.Renames)

	out, err := f.YAML()
	require.NoError(t, err)
	assert.Contains(t, string(out), "${HOME_FOR_TEST}/x", "the import keeps references, not their values")
	assert.NotContains(t, string(out), "/home/me")
}

func TestImportRefusesInputVariables(t *testing.T) {
	src := `{
  "inputs": [{"type": "promptString", "id": "gh-token"}],
  "servers": {
    "github": {
      "type": "http",
      "url": "https://api.example.com/mcp",
      "headers": {"Authorization": "Bearer ${input:gh-token}"}
    }
  }
}`
	ps := problemsOf(t, src)
	require.Len(t, ps, 1)
	assert.Equal(t, 7, ps[0].Line)
	assert.Equal(t, "servers.github.headers.Authorization", ps[0].Key, "names the server and the key")
	assert.Contains(t, ps[0].Msg, `${input:gh-token}`)
	assert.Contains(t, ps[0].Msg, "environment variable")

	ps = problemsOf(t, `{"mcpServers": {"a": {"command": "x", "args": ["${input:p}", "${command:pick}"]}}}`)
	require.Len(t, ps, 2, "refused in mcpServers files too: %v", ps)
	assert.Equal(t, "mcpServers.a.args[0]", ps[0].Key)
	assert.Equal(t, "mcpServers.a.args[1]", ps[1].Key)
}

func TestBackendNameRule(t *testing.T) {
	for in, want := range map[string]string{
		"github":                    "github",
		"My Server":                 "my-server",
		"@modelcontextprotocol/git": "modelcontextprotocol-git",
		"__x":                       "x",
		"-a.b":                      "a-b",
		"Ünïcode":                   "n-code",
		"???":                       "server",
		"a_b-C":                     "a_b-c",
	} {
		got := BackendName(in)
		assert.Equal(t, want, got, in)
		assert.Regexp(t, backendNameRE, got)
	}
}

func TestImportNameCollisions(t *testing.T) {
	src := `{"mcpServers": {
  "My Tool": {"command": "x"},
  "my tool": {"command": "x"},
  "my-tool": {"command": "x"},
  "MY.TOOL": {"command": "x"}
}}`
	f, err := ParseFile([]byte(src), "c.json")
	require.NoError(t, err)
	var names []string
	for _, b := range f.Config.Backends {
		names = append(names, b.Name)
	}
	assert.Equal(t, []string{"my-tool-2", "my-tool-3", "my-tool", "my-tool-4"}, names,
		"a valid name is kept; mapped names that collide get -2, -3, ... in file order")
	assert.Equal(t, []Rename{
		{From: "My Tool", To: "my-tool-2", Line: 2},
		{From: "my tool", To: "my-tool-3", Line: 3},
		{From: "MY.TOOL", To: "my-tool-4", Line: 5},
	}, f.Renames)
}

func TestImportProblemsCarryLines(t *testing.T) {
	for _, tt := range []struct {
		name, src string
		want      []string // "line key: msg" prefixes
	}{
		{"unknown server key", "{\"mcpServers\": {\n \"a\": {\"command\": \"x\",\n \"cwd\": \"/tmp\"}}}",
			[]string{`3 mcpServers.a.cwd: unknown key "cwd"`}},
		{"bad url", "{\"mcpServers\": {\n\n \"a b\": {\"url\": \"ftp://x\"}}}",
			[]string{`3 mcpServers["a b"].url: invalid URL "ftp://x"`}},
		{"both url and command", "{\"servers\": {\n \"a\": {\n\"url\": \"http://x\",\n \"command\": \"y\"}}}",
			[]string{`4 servers.a.command: backend has both url and command`}},
		{"unknown type", "{\"mcpServers\": {\n \"a\": {\"type\": \"ws\",\n \"url\": \"http://x\"}}}",
			[]string{`2 mcpServers.a.type: unknown type "ws"`}},
		{"stdio with url", "{\"servers\": {\n \"a\": {\"type\": \"stdio\", \"url\": \"http://x\"}}}",
			[]string{`2 servers.a.type: transport stdio requires command`}},
		{"neither", "{\"servers\": {\n \"a\": {}}}", []string{`2 servers.a: backend needs url or command`}},
		{"no servers", "{\"servers\": {}}", []string{`1 servers: at least one backend is required`}},
		{"args not a list", "{\"mcpServers\": {\"a\": {\"command\": \"x\",\n\"args\": \"-v\"}}}",
			[]string{`2 mcpServers.a.args: want a list`}},
		{"duplicate server", "{\"mcpServers\": {\"a\": {\"command\": \"x\"},\n\"a\": {\"command\": \"y\"}}}",
			[]string{`2 mcpServers.a: duplicate key "a" (first at line 1)`}},
		{"vscode unknown top-level key", "{\"servers\": {\"a\": {\"command\": \"x\"}},\n\"mcp\": {}}",
			[]string{`2 mcp: unknown key "mcp"`}},
		{"syntax error", "{\"mcpServers\": {\n \"a\": {\"command\": \"x\"\n \"args\": []}}}",
			[]string{`3 invalid JSON`}},
		{"truncated", "{\"mcpServers\": {\n \"a\": {", []string{`2 invalid JSON: unexpected end of input`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ps := problemsOf(t, tt.src)
			var got []string
			for _, p := range ps {
				s := p.Msg
				if p.Key != "" {
					s = p.Key + ": " + s
				}
				got = append(got, strings.TrimSpace(strings.Join([]string{strconv.Itoa(p.Line), s}, " ")))
			}
			require.Len(t, got, len(tt.want), "%q", got)
			for i := range tt.want {
				assert.True(t, strings.HasPrefix(got[i], tt.want[i]), "got %q, want prefix %q", got[i], tt.want[i])
			}
		})
	}
}

func TestImportYAMLReparses(t *testing.T) {
	t.Setenv("HOME_FOR_TEST", "/home/me")
	f, err := ParseFile([]byte(claudeJSON), "claude.json")
	require.NoError(t, err)
	out, err := f.YAML()
	require.NoError(t, err)
	assert.Contains(t, string(out), `Server "My GitHub" is backend "my-github"`)
	assert.Contains(t, string(out), `Server "old" is disabled`)
	assert.Contains(t, string(out), "${HOME_FOR_TEST}")
	again, err := ParseFile(out, "imported.yaml")
	require.NoError(t, err, "import output:\n%s", out)
	assert.Equal(t, FormatVMCP, again.Format)
	assert.Equal(t, f.Config, again.Config)
}

func TestVMCPConfigAsJSON(t *testing.T) {
	src := "{\n\t\"listen\": \"127.0.0.1:9000\",\n\t\"backends\": [\n\t\t{\"name\": \"a\", \"url\": \"http://x/mcp\", \"timeout\": \"5s\"},\n\t\t{\"name\": \"B\", \"command\": \"x\"}\n\t]\n}"
	ps := problemsOf(t, src)
	require.Len(t, ps, 1)
	assert.Equal(t, Problem{File: "test.yaml", Line: 5, Key: "backends[1].name",
		Msg: `invalid backend name "B": want lower-case letters, digits, _ and -, starting with a letter or digit`}, ps[0])
	f, err := ParseFile([]byte(strings.Replace(src, `"B"`, `"b"`, 1)), "v.json")
	require.NoError(t, err)
	assert.Equal(t, FormatVMCP, f.Format)
	assert.Equal(t, 5*time.Second, f.Config.Backends[0].Timeout.D())
	assert.Equal(t, "127.0.0.1:9000", f.Config.Listen)
}

func TestYAMLFlowMappingIsNotMistakenForJSON(t *testing.T) {
	c, err := Parse([]byte("{backends: [{name: a, url: 'http://x/mcp'}]}"), "flow.yaml")
	require.NoError(t, err)
	assert.Equal(t, "a", c.Backends[0].Name)
}

func TestCursorEnvVariables(t *testing.T) {
	t.Setenv("KEY_FOR_TEST", "k")
	f, err := ParseFile([]byte(`{"mcpServers": {"a": {"url": "https://x/mcp", "headers": {"K": "${env:KEY_FOR_TEST}"}}}}`), "c.json")
	require.NoError(t, err)
	assert.Equal(t, "k", f.Config.Backends[0].Headers["K"])
}
