package vmcp_test

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// reloadFixture is a vmcp started from a config file (as vmcp serve) over
// backends alpha and beta, with a Legacy client whose tools list_changed
// notifications arrive on changed.
type reloadFixture struct {
	v       *harness.VMCP
	path    string
	alpha   *harness.Backend
	beta    *harness.Backend
	cs      *mcp.ClientSession
	changed chan struct{}
}

func startReloadFixture(t *testing.T) *reloadFixture {
	f := &reloadFixture{path: filepath.Join(t.TempDir(), "vmcp.yaml"), changed: make(chan struct{}, 16)}
	f.alpha = harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	f.beta = harness.StartBackend(t, "beta", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "hello") })
	f.write(t, f.alpha)
	cfg, err := config.Load(f.path)
	require.NoError(t, err)
	f.v = harness.StartVMCP(t, func(c *config.Config) { *c = *cfg })
	f.cs = f.v.Connect(t, "2025-11-25", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
		ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { f.changed <- struct{}{} }})
	return f
}

// write writes the config file with backends bs (rename over it, as editors do).
func (f *reloadFixture) write(t *testing.T, bs ...*harness.Backend) {
	var b strings.Builder
	b.WriteString("listen: 127.0.0.1:0\nbackends:\n")
	for _, be := range bs {
		fmt.Fprintf(&b, "  - name: %s\n    url: %s\n", be.Name, be.URL)
	}
	f.writeText(t, b.String())
}

func (f *reloadFixture) writeText(t *testing.T, text string) {
	tmp := f.path + ".tmp"
	require.NoError(t, os.WriteFile(tmp, []byte(text), 0o600))
	require.NoError(t, os.Rename(tmp, f.path))
}

func (f *reloadFixture) awaitChanged(t *testing.T) {
	t.Helper()
	select {
	case <-f.changed:
	case <-time.After(20 * time.Second):
		t.Fatal("no tools list_changed")
	}
}

// An invalid config on reload is rejected with its file:line problems, and
// the running config is kept (the catalogue and the calls unchanged).
func TestReloadInvalidConfigIsRejectedAndTheRunningOneKept(t *testing.T) {
	f := startReloadFixture(t)
	f.writeText(t, "listen: 127.0.0.1:0\nbackends:\n  - name: Bad Name\n    url: http://127.0.0.1:1/mcp\n")
	rec := f.v.Server.ReloadPath(f.path, vmcp.ReloadAPI)
	require.Equal(t, vmcp.ReloadInvalid, rec.Outcome)
	require.NotEmpty(t, rec.Errors)
	require.Contains(t, rec.Errors[0], f.path+":3", "file:line of the problem")
	require.Empty(t, rec.Added)
	require.Equal(t, []string{"alpha_echo"}, harness.ToolNames(t, f.cs), "the running catalogue is kept")
	res, err := f.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha_echo", Arguments: map[string]any{"text": "x"}})
	require.NoError(t, err)
	require.Equal(t, "echo:x", harness.Text(t, res))
	require.Equal(t, 1.0, testutil.ToFloat64(f.v.Server.Metrics().ConfigReloads.WithLabelValues("invalid")))
	st := f.v.Server.Status()
	require.Len(t, st.Reloads, 1)
	require.Equal(t, "invalid", st.Reloads[0].Outcome)
	require.Len(t, st.Backends, 1)
}

// A key that cannot change live (listen) is reported and left as it was;
// the rest of the config is applied (outcome partial).
func TestReloadKeyThatCannotChangeLiveIsReported(t *testing.T) {
	f := startReloadFixture(t)
	text := fmt.Sprintf("listen: 127.0.0.1:9\nbackends:\n  - name: alpha\n    url: %s\n  - name: beta\n    url: %s\n", f.alpha.URL, f.beta.URL)
	f.writeText(t, text)
	rec := f.v.Server.ReloadPath(f.path, vmcp.ReloadAPI)
	require.Equal(t, vmcp.ReloadPartial, rec.Outcome)
	require.Equal(t, []string{"listen: cannot change while vmcp runs"}, rec.Ignored)
	require.Equal(t, []string{"beta"}, rec.Added)
	f.awaitChanged(t)
	require.ElementsMatch(t, []string{"alpha_echo", "beta_hello"}, harness.ToolNames(t, f.cs))
	require.Equal(t, 1.0, testutil.ToFloat64(f.v.Server.Metrics().ConfigReloads.WithLabelValues("partial")))
}

// Writing the config file (an editor's rename over it) reloads it: the
// added backend's tools reach the client with a list_changed.
func TestReloadOnConfigFileWrite(t *testing.T) {
	f := startReloadFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	require.NoError(t, f.v.Server.Watch(ctx, f.path, nil))
	f.write(t, f.alpha, f.beta)
	f.awaitChanged(t)
	require.ElementsMatch(t, []string{"alpha_echo", "beta_hello"}, harness.ToolNames(t, f.cs))
	rec := f.v.Server.Reloads()[0]
	require.Equal(t, vmcp.ReloadFile, rec.Source)
	require.Equal(t, vmcp.ReloadOK, rec.Outcome, "%+v", rec)
}

// SIGHUP reloads the config file (a real signal to this process, delivered
// to the channel vmcp serve hands Watch).
func TestReloadOnSIGHUP(t *testing.T) {
	f := startReloadFixture(t)
	hup := make(chan os.Signal, 1)
	signal.Notify(hup, syscall.SIGHUP)
	defer signal.Stop(hup)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dir := filepath.Join(t.TempDir(), "elsewhere") // the file changes where Watch does not look
	require.NoError(t, os.Mkdir(dir, 0o700))
	other := &reloadFixture{path: filepath.Join(dir, "vmcp.yaml")}
	other.write(t, f.alpha, f.beta)
	require.NoError(t, f.v.Server.Watch(ctx, other.path, hup))
	require.NoError(t, syscall.Kill(os.Getpid(), syscall.SIGHUP))
	f.awaitChanged(t)
	require.ElementsMatch(t, []string{"alpha_echo", "beta_hello"}, harness.ToolNames(t, f.cs))
	rec := f.v.Server.Reloads()[0]
	require.Equal(t, vmcp.ReloadSIGHUP, rec.Source)
	require.Equal(t, []string{"beta"}, rec.Added)
}
