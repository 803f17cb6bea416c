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
		"serve":    {"--config FILE", "--listen HOST:PORT", "--pprof HOST:PORT", "--help"},
		"validate": {"--config FILE", "--help"},
		"import":   {"--help"},
		"status":   {"--url URL", "--timeout DURATION", "--help"},
		"version":  {"--help"},
		"help":     {"--help"},
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
	assert.Equal(t, p+`:3: backends[0].command: command "no-such-mcp-server" not found on PATH`+"\n"+
		p+`:5: backends[0].env.TOKEN: ${VMCP_TEST_UNSET_TOKEN} is not set in the environment (it expands to "")`+"\n", errOut)
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
		assert.Regexp(t, `alpha\s+stdio\s+-\s+ready\s+2`, out)
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
