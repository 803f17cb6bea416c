package vmcp_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestStatusShowedReadyAndNoErrorAfterAStdioBackendCameBack: a stdio
// backend whose process died and came back was "ready" with an empty last
// error and no restart count; /status now keeps the last error and its
// time, counts the restarts and says since when the state holds.
func TestStatusShowedReadyAndNoErrorAfterAStdioBackendCameBack(t *testing.T) {
	t.Parallel()
	cfg := harness.LegacyStdioBackend(t, "dying")
	cfg.Env["STDIOSERVER_DIE_ON_PING"] = "1" // exits on its first health probe
	readies := make(chan struct{}, 64)
	v := harness.StartVMCPWithOptions(t, vmcp.Options{
		BackendTiming: backends.Timing{MinBackoff: 10 * time.Millisecond, MaxBackoff: 50 * time.Millisecond, HealthInterval: 10 * time.Millisecond},
		OnBackendState: func(_ string, s backends.State) {
			if s == backends.StateReady {
				select {
				case readies <- struct{}{}:
				default:
				}
			}
		},
	}, nil, cfg)
	for range 3 { // ready, then ready again twice: two restarts
		select {
		case <-readies:
		case <-time.After(time.Minute):
			t.Fatal("the stdio backend did not come back")
		}
	}
	rep := v.Server.Status()
	require.Len(t, rep.Backends, 1)
	b := rep.Backends[0]
	require.GreaterOrEqual(t, b.Restarts, 2, "restarts counted")
	require.False(t, b.LastRestart.IsZero())
	require.NotEmpty(t, b.LastError, "the last error is kept after recovery")
	require.False(t, b.LastErrorAt.IsZero())
	require.False(t, b.Since.IsZero())
	require.False(t, rep.Started.IsZero())
	require.True(t, rep.Time.After(rep.Started) || rep.Time.Equal(rep.Started))
}

// TestStatusListedSessionsOnlyAsACount: /status gave 23 live Legacy
// sessions as a number; it now lists the newest with a prefix of the id,
// the client, the revision, the principal, age, idle time and backend
// sessions, with two principals told apart, and the last minute's rates.
func TestStatusListedSessionsOnlyAsACount(t *testing.T) {
	t.Parallel()
	idp := authtest.Start(t, audience)
	v, _ := protected(t, idp, nil)
	alice, _, err := connect(t, v.URL, idp.Token(t, "alice", "mcp:tools"), "2025-11-25", nil)
	require.NoError(t, err)
	_, err = call(t, alice, "alpha_echo") // opens alice's backend session
	require.NoError(t, err)
	bob, _, err := connect(t, v.URL, idp.Token(t, "bob", "mcp:tools"), "2025-11-25", nil)
	require.NoError(t, err)
	_, err = bob.CallTool(context.Background(), &mcp.CallToolParams{Name: "no_such_tool"})
	require.Error(t, err, "an error the rates count")

	rep := v.Server.Status()
	require.Equal(t, 2, rep.Sessions.Legacy)
	require.Len(t, rep.Sessions.List, 2)
	newest, older := rep.Sessions.List[0], rep.Sessions.List[1]
	require.Equal(t, "bob", newest.Principal, "newest first")
	require.Equal(t, "alice", older.Principal)
	require.Len(t, older.ID, 8)
	require.True(t, strings.HasPrefix(alice.ID(), older.ID), "a prefix of the session id, never the whole")
	require.Equal(t, "auth-test", older.Client)
	require.Equal(t, "1", older.ClientVersion)
	require.Equal(t, "2025-11-25", older.Revision)
	require.Equal(t, 1, older.BackendSessions)
	require.Zero(t, newest.BackendSessions)
	require.GreaterOrEqual(t, older.AgeSeconds, newest.AgeSeconds)
	// The endpoint counts a request once its handler returns, which may be
	// just after the client has its answer: wait for the count itself.
	require.Eventually(t, func() bool { return v.Server.Status().Rates.ErrorsPerSecond > 0 }, time.Minute, time.Millisecond)
	rates := v.Server.Status().Rates
	require.Greater(t, rates.RequestsPerSecond, rates.ErrorsPerSecond, "every request counts, the error among them")
	require.Greater(t, rates.WindowSeconds, 0.0)
}

// TestStatusNamesTheConfigFileServed: the file vmcp serve watches is
// on /status.
func TestStatusNamesTheConfigFileServed(t *testing.T) {
	t.Parallel()
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := harness.StartVMCP(t, nil, b.Config())
	require.Empty(t, v.Server.Status().Config, "embedded: no file")
	path := filepath.Join(t.TempDir(), "vmcp.yaml")
	require.NoError(t, os.WriteFile(path, []byte("backends: []\n"), 0o600))
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	require.NoError(t, v.Server.Watch(ctx, path, nil))
	require.Equal(t, path, v.Server.Status().Config)
}
