package main

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/status"
)

// runArgs runs the vmcp command line with args and returns its exit code,
// stdout and stderr.
func runArgs(args ...string) (int, string, string) {
	var out, errOut bytes.Buffer
	code := run(args, &out, &errOut)
	return code, out.String(), errOut.String()
}

const reference = `README.md, section "Configuration reference"`

func TestHelpForVMCP(t *testing.T) {
	for _, args := range [][]string{{"--help"}, {"-h"}, {"-help"}, {"help"}} {
		code, out, errOut := runArgs(args...)
		assert.Equal(t, 0, code, args)
		assert.Empty(t, errOut, args)
		for _, want := range []string{"vmcp serve --config FILE", "vmcp validate", "vmcp import FILE", "vmcp status", "vmcp version", reference} {
			assert.Contains(t, out, want, args)
		}
	}
}

func TestHelpForEachCommand(t *testing.T) {
	flags := map[string][]string{
		"serve":              {"--config FILE", "--listen HOST:PORT", "--pprof HOST:PORT", "--help"},
		"validate":           {"--config FILE", "--help"},
		"import":             {"--help"},
		"status":             {"--url URL", "--timeout DURATION", "--help"},
		"accept-tool-change": {"--url URL", "--token-env", "--timeout DURATION", "--help"},
		"version":            {"--help"},
		"help":               {"--help"},
	}
	for name, want := range flags {
		for _, args := range [][]string{{"help", name}, {name, "--help"}, {name, "-h"}} {
			code, out, errOut := runArgs(args...)
			assert.Equal(t, 0, code, args)
			assert.Empty(t, errOut, args)
			assert.Contains(t, out, "usage: vmcp "+name, args)
			assert.Contains(t, out, reference, args)
			for _, w := range want {
				assert.Contains(t, out, w, args)
			}
		}
	}
}

func TestUnknownCommandIsAUsageError(t *testing.T) {
	for _, args := range [][]string{{"bogus"}, {"help", "bogus"}, {}} {
		code, out, errOut := runArgs(args...)
		assert.Equal(t, 2, code, args)
		assert.Empty(t, out, args)
		assert.Contains(t, errOut, "usage:", args)
		if len(args) > 0 {
			assert.Contains(t, errOut, `unknown command "bogus"`, args)
		}
	}
	code, _, errOut := runArgs("serve", "--nope")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "flag provided but not defined: -nope")
	assert.Contains(t, errOut, "usage: vmcp serve")
	code, _, errOut = runArgs("validate")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "--config is required")
}

func write(t *testing.T, name, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	require.NoError(t, os.WriteFile(p, []byte(content), 0o600))
	return p
}

func TestValidateReportsMissingCommandAndUnsetVars(t *testing.T) {
	os.Unsetenv("VMCP_TEST_UNSET_TOKEN")
	t.Setenv("PATH", t.TempDir())
	p := write(t, "v.yaml", `backends:
  - name: a
    command: no-such-mcp-server
    env:
      TOKEN: ${VMCP_TEST_UNSET_TOKEN}
  - name: b
    url: http://127.0.0.1:9/mcp
`)
	code, out, errOut := runArgs("validate", "--config", p)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Equal(t, p+`:3: backends[0].command: warning: command "no-such-mcp-server" not found on PATH`+"\n"+
		p+`:5: backends[0].env.TOKEN: warning: ${VMCP_TEST_UNSET_TOKEN} is not set in the environment (it expands to "")`+"\n", errOut)
}

// Regression (issue 27): vmcp validate on a file with 9 mistakes printed
// 7; the missing stdio command and the unset ${VAR} appeared only once the
// other 7 were fixed.
func TestValidateHidMissingCommandAndUnsetVarBehindOtherProblems(t *testing.T) {
	os.Unsetenv("VMCP_TEST_UNSET_TOKEN")
	t.Setenv("PATH", t.TempDir())
	p := write(t, "v.yaml", `listen: localhost
colour: blue
backends:
  - name: Alpha
    url: /mcp
    tiemout: 5s
  - name: b
    command: no-such-mcp-server
    env:
      TOKEN: ${VMCP_TEST_UNSET_TOKEN}
    timeout: soon
aggregation:
  conflict_resolution: random
  priority: [zz]
`)
	code, out, errOut := runArgs("validate", "--config", p)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	want := []string{
		`:1: listen: want HOST:PORT, got "localhost"`,
		`:2: colour: unknown key "colour"`,
		`:4: backends[0].name: invalid backend name "Alpha"`,
		`:5: backends[0].url: invalid URL "/mcp"`,
		`:6: backends[0].tiemout: unknown key "tiemout"`,
		`:8: backends[1].command: warning: command "no-such-mcp-server" not found on PATH`,
		`:10: backends[1].env.TOKEN: warning: ${VMCP_TEST_UNSET_TOKEN} is not set in the environment`,
		`:11: backends[1].timeout: invalid duration "soon"`,
		`:13: aggregation.conflict_resolution: unknown strategy "random"`,
		`:14: aggregation.priority[0]: unknown backend "zz"`,
	}
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	require.Len(t, lines, len(want), errOut)
	for i, w := range want {
		assert.True(t, strings.HasPrefix(lines[i], p+w), "line %d: got %q, want prefix %q", i, lines[i], p+w)
	}

	// serve refuses the same file, printing the same lines
	code, errServe := serveArgs(t, p)
	assert.Equal(t, 1, code)
	assert.Equal(t, errOut, errServe)
}

// serveArgs runs vmcp serve's start-up on path as the command does and
// returns its exit code and stderr; a file it would serve fails the test.
func serveArgs(t *testing.T, path string) (int, string) {
	t.Helper()
	var errOut bytes.Buffer
	f, code := load("serve", newFlagSet(lookup("serve")), path, &errOut)
	require.Nil(t, f, "the file is valid")
	return code, errOut.String()
}

// fakeOnPath puts executables with these names on a fresh PATH.
func fakeOnPath(t *testing.T, names ...string) {
	t.Helper()
	dir := t.TempDir()
	for _, n := range names {
		require.NoError(t, os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\n"), 0o755))
	}
	t.Setenv("PATH", dir)
}

const npxClaude = `{"mcpServers": {
  "everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]},
  "fetch": {"command": "uvx", "args": ["mcp-server-fetch"]},
  "remote": {"url": "https://example.com/mcp"}
}}`

// Serving a Claude Desktop config of npx servers started an npx process
// per Legacy session and backend and nothing said so: validate notes each
// launcher backend with file:line, and the note alone does not fail it.
func TestValidateNotesLauncherBackendsWithoutFailing(t *testing.T) {
	fakeOnPath(t, "npx", "uvx")
	p := write(t, "claude.json", npxClaude)
	code, out, errOut := runArgs("validate", p)
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, `config OK: 3 backends (read as Claude Desktop / Cursor "mcpServers" JSON)`+"\n", out)
	lines := strings.Split(strings.TrimSuffix(errOut, "\n"), "\n")
	require.Len(t, lines, 2, errOut)
	assert.True(t, strings.HasPrefix(lines[0], p+`:2: mcpServers.everything.command: note: runs through npx: each Legacy client session starts its own process`), lines[0])
	assert.True(t, strings.HasPrefix(lines[1], p+`:3: mcpServers.fetch.command: note: runs through uvx:`), lines[1])
	for _, want := range []string{"100 MB or more", "seconds of start-up", `set "isolation: shared"`, "sampling, elicitation, roots"} {
		assert.Contains(t, lines[0], want)
	}

	// serve logs each note once, at info
	f, code := load("serve", newFlagSet(lookup("serve")), p, io.Discard)
	require.Equal(t, 0, code)
	var buf bytes.Buffer
	logFile(slog.New(slog.NewTextHandler(&buf, nil)), f)
	assert.Equal(t, 1, strings.Count(buf.String(), `level=INFO msg="`+p+`:2: mcpServers.everything.command: runs through npx`), buf.String())
	assert.Equal(t, 1, strings.Count(buf.String(), "runs through uvx"), buf.String())
}

// vmcp import keeps the default isolation for a launcher backend and says
// why above it, with "isolation: shared" ready to uncomment; uncommented,
// the file validates without the note and runs one process.
func TestImportCommentsOnLauncherIsolation(t *testing.T) {
	fakeOnPath(t, "npx", "uvx")
	p := write(t, "claude.json", npxClaude)
	code, out, errOut := runArgs("import", p)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, errOut, p+`:2: mcpServers.everything.command: note: runs through npx`)
	assert.Contains(t, out, "backends:\n  # Runs through npx: each Legacy client session starts its own process\n")
	assert.Contains(t, out, `uncomment "isolation: shared" below`)
	assert.Contains(t, out, "    args: [-y, '@modelcontextprotocol/server-everything']\n    # isolation: shared\n  # Runs through uvx:")
	assert.Contains(t, out, "  - name: remote\n    url: https://example.com/mcp\n", "no comment on an HTTP backend")

	y := write(t, "vmcp.yaml", strings.Replace(out, "# isolation: shared", "isolation: shared", 1))
	code, vout, errOut := runArgs("validate", "--config", y)
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, "config OK: 3 backends\n", vout)
	assert.NotContains(t, errOut, "runs through npx")
	assert.Contains(t, errOut, "runs through uvx", "the other launcher backend is still noted")
}

const claude = `{"mcpServers": {
  "My Server": {"command": "/bin/sh", "args": ["-c", "exec cat"]},
  "remote": {"type": "http", "url": "https://example.com/mcp"}
}}`

func TestValidateImportedFile(t *testing.T) {
	p := write(t, "claude.json", claude)
	code, out, errOut := runArgs("validate", p)
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, `config OK: 2 backends (read as Claude Desktop / Cursor "mcpServers" JSON; server "My Server" is backend "my-server")`+"\n", out)
}

func TestImportPrintsValidYAML(t *testing.T) {
	p := write(t, "claude.json", claude)
	code, out, errOut := runArgs("import", p)
	require.Equal(t, 0, code, errOut)
	assert.Contains(t, out, "name: my-server")
	y := write(t, "vmcp.yaml", out)
	code, vout, errOut := runArgs("validate", "--config", y)
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, "config OK: 2 backends\n", vout)

	// a problem keeps its file:line; usage errors exit 2
	bad := write(t, "bad.json", "{\"servers\": {\n \"gh\": {\"url\": \"https://x/mcp\", \"headers\": {\"A\": \"${input:t}\"}}}}")
	code, out, errOut = runArgs("import", bad)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, bad+":2: servers.gh.headers.A: ${input:t}")
	code, _, _ = runArgs("import")
	assert.Equal(t, 2, code)
}

func TestVersion(t *testing.T) {
	code, out, _ := runArgs("version")
	assert.Equal(t, 0, code)
	assert.True(t, strings.HasPrefix(out, "vmcp "), out)
}

func TestStatusCommand(t *testing.T) {
	rep := status.Report{Name: "vmcp", Version: "test", Ready: true,
		Backends: []status.Backend{{Name: "alpha", Transport: "stdio", State: "ready", Tools: 2}}}
	mux := http.NewServeMux()
	mux.Handle("GET /status", status.Handler(func() status.Report { return rep }))
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, u := range []string{srv.URL, srv.URL + "/", srv.URL + "/status"} {
		code, out, errOut := runArgs("status", "--url", u)
		require.Equal(t, 0, code, errOut)
		assert.Contains(t, out, "vmcp (vmcp test): ready")
		assert.Regexp(t, `alpha\s+stdio\s+-\s+ready\s+-\s+0\s+2`, out)
	}
	srv.Close()
	code, out, errOut := runArgs("status", "--url", srv.URL)
	assert.Equal(t, 1, code)
	assert.Empty(t, out)
	assert.Contains(t, errOut, "vmcp status: ")
	code, _, errOut = runArgs("status", "--url", "ftp://x")
	assert.Equal(t, 2, code)
	assert.Contains(t, errOut, "invalid --url")
}

func TestServeLogsRenamesAndWarnings(t *testing.T) {
	os.Unsetenv("VMCP_TEST_UNSET_TOKEN")
	p := write(t, "claude.json", `{"mcpServers": {
  "My Server": {"command": "/bin/sh", "env": {"T": "${VMCP_TEST_UNSET_TOKEN}"}},
  "Old One": {"command": "/bin/sh", "disabled": true}
}}`)
	f, code := load("serve", newFlagSet(lookup("serve")), p, io.Discard)
	require.Equal(t, 0, code)
	var buf bytes.Buffer
	logFile(slog.New(slog.NewTextHandler(&buf, nil)), f)
	out := buf.String()
	assert.Contains(t, out, `msg="config read as Claude Desktop / Cursor \"mcpServers\" JSON"`)
	assert.Contains(t, out, `msg="server renamed to a valid backend name" server="My Server" backend=my-server file=`+p+` line=2`)
	assert.Contains(t, out, `msg="disabled server left out" server="Old One"`)
	assert.Contains(t, out, `level=WARN msg="`+p+`:2: mcpServers[\"My Server\"].env.T: ${VMCP_TEST_UNSET_TOKEN} is not set`)
}

// A file with one backend validated as "config OK: 1 backends".
func TestValidateOneBackendsWasPlural(t *testing.T) {
	p := write(t, "one.yaml", "backends:\n  - name: a\n    url: http://127.0.0.1:9/mcp\n")
	code, out, errOut := runArgs("validate", "--config", p)
	assert.Equal(t, 0, code, errOut)
	assert.Equal(t, "config OK: 1 backend\n", out)
}
