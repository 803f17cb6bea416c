package config

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// warningsOf parses src as name and returns its warnings as strings.
func warningsOf(t *testing.T, src, name string) []string {
	t.Helper()
	f, err := ParseFile([]byte(src), name)
	require.NoError(t, err)
	var out []string
	for _, w := range f.Warnings {
		out = append(out, w.String())
	}
	return out
}

func TestUnsetVarsReportedWithLines(t *testing.T) {
	t.Setenv("SET_FOR_TEST", "x")
	t.Setenv("EMPTY_FOR_TEST", "") // set, even if empty: not reported
	os.Unsetenv("UNSET_A_FOR_TEST")
	os.Unsetenv("UNSET_B_FOR_TEST")
	src := `backends:
  - name: a
    url: http://127.0.0.1:9/${SET_FOR_TEST}
    headers:
      Authorization: "Bearer ${UNSET_A_FOR_TEST}"
  - name: b
    command: /bin/sh
    args:
      - "${EMPTY_FOR_TEST}"
      - "${UNSET_B_FOR_TEST}-${UNSET_B_FOR_TEST}"
    env: {K: "${UNSET_A_FOR_TEST}"}
`
	assert.Equal(t, []string{
		`v.yaml:5: backends[0].headers.Authorization: ${UNSET_A_FOR_TEST} is not set in the environment (it expands to "")`,
		`v.yaml:10: backends[1].args[1]: ${UNSET_B_FOR_TEST} is not set in the environment (it expands to "")`,
		`v.yaml:11: backends[1].env.K: ${UNSET_A_FOR_TEST} is not set in the environment (it expands to "")`,
	}, warningsOf(t, src, "v.yaml"))

	// the same in a Claude Desktop file names its keys and lines
	claude := "{\"mcpServers\": {\n  \"My Server\": {\"command\": \"/bin/sh\",\n    \"env\": {\"T\": \"${UNSET_A_FOR_TEST}\"}}}}"
	assert.Equal(t, []string{
		`c.json:3: mcpServers["My Server"].env.T: ${UNSET_A_FOR_TEST} is not set in the environment (it expands to "")`,
	}, warningsOf(t, claude, "c.json"))
}

func TestMissingCommandsReportedWithLines(t *testing.T) {
	dir := t.TempDir()
	exe := filepath.Join(dir, "my-server")
	require.NoError(t, os.WriteFile(exe, []byte("#!/bin/sh\n"), 0o755))
	plain := filepath.Join(dir, "not-exec")
	require.NoError(t, os.WriteFile(plain, []byte("x"), 0o644))
	t.Setenv("PATH", "/nonexistent-dir")
	src := `backends:
  - name: abs-ok
    command: ` + exe + `
  - name: abs-missing
    command: ` + filepath.Join(dir, "nope") + `
  - name: not-exec
    command: ` + plain + `
  - name: dir
    command: ` + dir + `
  - name: on-own-path
    command: my-server
    env: {PATH: "` + dir + `"}
  - name: not-on-path
    command: my-server
  - name: http
    url: http://127.0.0.1:9/mcp
`
	assert.Equal(t, []string{
		`v.yaml:5: backends[1].command: command "` + filepath.Join(dir, "nope") + `" does not exist`,
		`v.yaml:7: backends[2].command: command "` + plain + `" is not an executable file`,
		`v.yaml:9: backends[3].command: command "` + dir + `" is a directory`,
		`v.yaml:14: backends[5].command: command "my-server" not found on PATH`,
	}, warningsOf(t, src, "v.yaml"))

	t.Setenv("PATH", dir)
	assert.Empty(t, warningsOf(t, "backends: [{name: a, command: my-server}]", "v.yaml"), "found on vmcp's PATH")
}

// Regression: a relative stdio command (./server) was resolved against
// vmcp's working directory, so the same config ran a different program,
// or none, when vmcp was started elsewhere.
func TestRelativeCommandResolvedAgainstWorkingDirectoryNotConfigDir(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "bin", "srv"), []byte("#!/bin/sh\n"), 0o755))
	path := filepath.Join(dir, "vmcp.yaml")
	require.NoError(t, os.WriteFile(path, []byte("backends: [{name: a, command: ./bin/srv}, {name: b, command: sh}]\n"), 0o644))
	t.Chdir(t.TempDir())
	f, err := Read(path)
	require.NoError(t, err)
	assert.Empty(t, f.Warnings)
	assert.Equal(t, filepath.Join(dir, "bin", "srv"), f.Config.Backends[0].Command)
	assert.Equal(t, "sh", f.Config.Backends[1].Command, "a bare name stays a PATH lookup")

	t.Chdir(dir) // --config vmcp.yaml: the directory is "."; ./bin/srv must not become a bare name
	f, err = Read("vmcp.yaml")
	require.NoError(t, err)
	assert.Empty(t, f.Warnings)
	assert.Equal(t, filepath.Join(dir, "bin", "srv"), f.Config.Backends[0].Command)
}

// Regression: examples/demo.yaml named ./bin/everything-server, which,
// relative to the file, is examples/bin/...: make run's stdio backend was
// always down.
func TestDemoConfigStdioCommandWasOutsideTheRepository(t *testing.T) {
	f, err := Read(filepath.Join("..", "..", "examples", "demo.yaml"))
	require.NoError(t, err)
	root, err := filepath.Abs(filepath.Join("..", ".."))
	require.NoError(t, err)
	assert.Equal(t, filepath.Join(root, "bin", "everything-server"), f.Config.Backends[0].Command)
}
