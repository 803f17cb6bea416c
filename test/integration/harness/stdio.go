package harness

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"

	"github.com/vmcp/vmcp/pkg/config"
)

var stdioBuild struct {
	once sync.Once
	bin  string
	err  string
}

// StdioBackend returns the config of a stdio backend running the test
// server program in ./stdioserver, whose tools are "echo" (returns its
// "text" argument), "whoami" (a random id per process, so one process per
// client session is observable), "counter" (a per-session counter from
// 1), "roots" (the client's roots, comma-separated), "roots_changed"
// (notifications/roots/list_changed received) and "report" (one log per
// level debug/info/warning/error, then progress 1..n; returns
// "reported:<marker>"), plus the prompt "greet" (any argument completes
// with "alpha" and "alpha2"), the subscribable resource mem://note and the
// tool "touch" (notifications/resources/updated for it to its
// subscribers). The program is built once
// per test binary with `go build` into a temporary directory; a build
// failure fails the test.
func StdioBackend(t testing.TB, name string) config.Backend {
	t.Helper()
	stdioBuild.once.Do(buildStdioServer)
	if stdioBuild.err != "" {
		t.Fatalf("harness: building stdio server: %s", stdioBuild.err)
	}
	return config.Backend{Name: name, Command: stdioBuild.bin, Transport: config.TransportStdio}
}

func buildStdioServer() {
	_, file, _, ok := runtime.Caller(0)
	if !ok {
		stdioBuild.err = "cannot locate the harness source"
		return
	}
	src := filepath.Join(filepath.Dir(file), "stdioserver")
	dir, err := os.MkdirTemp("", "vmcp-harness-stdio-")
	if err != nil {
		stdioBuild.err = err.Error()
		return
	}
	bin := filepath.Join(dir, "stdioserver")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	goCmd, err := exec.LookPath("go") // go test puts its own go first on PATH
	if err != nil {
		goCmd = filepath.Join(os.Getenv("GOROOT"), "bin", "go")
	}
	cmd := exec.Command(goCmd, "build", "-o", bin, ".")
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		stdioBuild.err = err.Error() + ": " + string(out)
		return
	}
	stdioBuild.bin = bin
}

// LegacyStdioBackend is StdioBackend for a server that negotiates only
// Legacy revisions (up to 2025-11-25), as servers predating 2026-07-28 do.
func LegacyStdioBackend(t testing.TB, name string) config.Backend {
	t.Helper()
	b := StdioBackend(t, name)
	b.Env = map[string]string{"STDIOSERVER_LEGACY": "1"}
	return b
}
