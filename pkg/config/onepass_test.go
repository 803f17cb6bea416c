package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// allOf parses src as name and returns every problem found (errors,
// warnings and notes) as labelled strings, sorted by line, and whether
// the file was refused.
func allOf(t *testing.T, src, name string) ([]string, bool) {
	t.Helper()
	var list []Problem
	f, err := ParseFile([]byte(src), name)
	if err != nil {
		var ve *ValidationError
		require.ErrorAs(t, err, &ve)
		list = ve.All()
	} else {
		list = f.Problems()
	}
	var out []string
	for _, p := range list {
		out = append(out, p.Labelled())
	}
	return out, err != nil
}

// fakeLauncherPath puts executables npx and docker on a fresh PATH, so a
// launcher backend is not also reported as a command not found.
func fakeLauncherPath(t *testing.T) {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"npx", "docker"} {
		require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\n"), 0o755))
	}
	t.Setenv("PATH", dir)
}

// NineMistakes is a file with every kind of problem: unknown keys, a
// malformed value, invalid values, a stdio command not found, an unset
// ${VAR}, a claims rule that never matches, and a launcher backend (note).
const nineMistakes = `listen: 127.0.0.1:8080
colour: blue
backends:
  - name: alpha
    url: http://127.0.0.1:9001/mcp
    tiemout: 5s
  - name: Bad
    command: no-such-mcp-server
    env:
      TOKEN: ${VMCP_ONEPASS_UNSET}
  - name: gamma
    url: ftp://h/x
    timeout: later
  - name: alpha
    command: npx
    args: [-y, "@modelcontextprotocol/server-everything"]
aggregation:
  priority: [alpha, delta]
pagination:
  page_size: 0
authorization:
  rules:
    - when: {claims: {role: [admin]}}
      allow: {tools: ["*"]}
`

// Regression: vmcp validate printed the schema and validation errors and
// stopped; the stdio command not found and the unset ${VAR} (and the
// claims rule without auth) appeared only once the others were fixed.
func TestMissingCommandAndUnsetVarWereHiddenByOtherProblems(t *testing.T) {
	fakeLauncherPath(t)
	os.Unsetenv("VMCP_ONEPASS_UNSET")
	got, refused := allOf(t, nineMistakes, "v.yaml")
	assert.True(t, refused)
	assert.Equal(t, []string{
		`v.yaml:2: colour: unknown key "colour"`,
		`v.yaml:6: backends[0].tiemout: unknown key "tiemout"`,
		`v.yaml:7: backends[1].name: invalid backend name "Bad": want lower-case letters, digits, _ and -, starting with a letter or digit`,
		`v.yaml:8: backends[1].command: warning: command "no-such-mcp-server" not found on PATH`,
		`v.yaml:10: backends[1].env.TOKEN: warning: ${VMCP_ONEPASS_UNSET} is not set in the environment (it expands to "")`,
		`v.yaml:12: backends[2].url: invalid URL "ftp://h/x": want an absolute http or https URL`,
		`v.yaml:13: backends[2].timeout: invalid duration "later": want e.g. "30s" or "5m"`,
		`v.yaml:14: backends[3].name: duplicate backend name "alpha"`,
		`v.yaml:15: backends[3].command: note: ` + launcherNote("npx"),
		`v.yaml:18: aggregation.priority[1]: unknown backend "delta"`,
		`v.yaml:20: pagination.page_size: must be between 1 and 10000, got 0`,
		`v.yaml:23: authorization.rules[0].when.claims: warning: never matches: without auth every client is anonymous and has no claims`,
	}, got)
}

// A client config's server with a problem no longer stops the pass: the
// other servers' warnings and notes are found with it.
func TestImportedFileProblemsWarningsAndNotesInOnePass(t *testing.T) {
	fakeLauncherPath(t)
	os.Unsetenv("VMCP_ONEPASS_UNSET")
	src := `{"mcpServers": {
  "bad": {"command": "x", "cwd": "/tmp"},
  "missing": {"command": "no-such-mcp-server"},
  "token": {"url": "https://example.com/mcp",
    "headers": {"Authorization": "Bearer ${VMCP_ONEPASS_UNSET}"}},
  "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
  "typo": {"type": "ws", "url": "https://example.com/ws"}
}}`
	got, refused := allOf(t, src, "c.json")
	assert.True(t, refused)
	assert.Equal(t, []string{
		`c.json:2: mcpServers.bad.cwd: unknown key "cwd"`,
		`c.json:3: mcpServers.missing.command: warning: command "no-such-mcp-server" not found on PATH`,
		`c.json:5: mcpServers.token.headers.Authorization: warning: ${VMCP_ONEPASS_UNSET} is not set in the environment (it expands to "")`,
		`c.json:6: mcpServers.everything.command: note: ` + launcherNote("npx"),
		`c.json:7: mcpServers.typo.type: unknown type "ws": want stdio, http (or streamable-http) or sse`,
	}, got)
}

// A problem that makes a later check meaningless is reported alone: what
// was decoded under a malformed key is not checked again, and references
// to a backend whose name is malformed are not "unknown".
func TestCascadingProblemsAreNotReported(t *testing.T) {
	fakeLauncherPath(t)
	os.Unsetenv("VMCP_ONEPASS_UNSET")
	for _, tt := range []struct {
		name, src, name2 string
		want             []string
	}{
		{"malformed name, then referenced", "backends:\n  - name: [a]\n    url: http://h/\naggregation:\n  priority: [a]\n  overrides: {a: {tools: {t: {name: x}}}}\nauthorization:\n  rules:\n    - allow: {backends: [a]}\n", "v.yaml",
			[]string{`v.yaml:2: backends[0].name: want a string, got a list`}},
		{"malformed backend list", "backends: 5\naggregation:\n  priority: [a]\n", "v.yaml",
			[]string{`v.yaml:1: backends: want a list, got "5"`}},
		{"malformed command", "backends:\n  - name: a\n    command: [no-such-mcp-server]\n", "v.yaml",
			[]string{`v.yaml:3: backends[0].command: want a string, got a list`}},
		{"malformed args with an unset var", "backends:\n  - name: a\n    command: npx\n    args: {x: \"${VMCP_ONEPASS_UNSET}\"}\n    isolation: shared\n", "v.yaml",
			[]string{`v.yaml:4: backends[0].args: want a list, got a mapping`}},
		{"malformed auth, claims rule", "backends:\n  - name: a\n    url: http://h/\nauth: 5\nauthorization:\n  rules:\n    - when: {claims: {g: [x]}}\n      allow: {tools: [\"*\"]}\n", "v.yaml",
			[]string{`v.yaml:4: auth: want a mapping, got "5"`}},
		{"empty auth, claims rule", "backends:\n  - name: a\n    url: http://h/\nauth:\nauthorization:\n  rules:\n    - when: {claims: {g: [x]}}\n      allow: {tools: [\"*\"]}\n", "v.yaml",
			[]string{`v.yaml:4: auth: empty: set issuer and audience, or remove the key to run without authentication`}},
		{"the only server is malformed", "{\"mcpServers\": {\n \"a\": {\"command\": \"x\", \"cwd\": \"/\"}}}", "c.json",
			[]string{`c.json:2: mcpServers.a.cwd: unknown key "cwd"`}},
		{"servers not a mapping", "{\"mcpServers\": [1]}", "c.json",
			[]string{`c.json:1: mcpServers: want a mapping of server names to servers, got a list`}},
		{"launcher under a transport refused", "backends:\n  - name: a\n    command: npx\n    transport: sse\n", "v.yaml",
			[]string{`v.yaml:4: backends[0].transport: transport sse requires url, not command`}},
		// decided: an error an unset ${VAR} causes is still an error (serve
		// refuses the file), listed after the warning that explains it
		{"unset var empties the url", "backends:\n  - name: a\n    url: \"${VMCP_ONEPASS_UNSET}\"\n", "v.yaml",
			[]string{`v.yaml:2: backends[0]: backend needs url or command`,
				`v.yaml:3: backends[0].url: warning: ${VMCP_ONEPASS_UNSET} is not set in the environment (it expands to "")`}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, refused := allOf(t, tt.src, tt.name2)
			assert.True(t, refused)
			assert.Equal(t, tt.want, got)
		})
	}
}
