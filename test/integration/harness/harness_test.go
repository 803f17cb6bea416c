package harness_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// connectDirect connects a client straight to a backend (no vmcp).
func connectDirect(t *testing.T, url, version string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c := mcp.NewClient(&mcp.Implementation{Name: "direct", Version: "test"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestBackendModesAndHelpers(t *testing.T) {
	for _, c := range []struct {
		mode        harness.Mode
		wantVersion string
	}{{harness.Stateful, "2025-11-25"}, {harness.Stateless, "2026-07-28"}} {
		t.Run(c.mode.String(), func(t *testing.T) {
			b := harness.StartBackend(t, "b", c.mode, func(s *mcp.Server) {
				harness.AddEcho(s, "echo")
				harness.AddTools(s, "t", 3)
				harness.AddCounter(s, "counter")
			})
			cs := connectDirect(t, b.URL, "")
			if got := cs.InitializeResult().ProtocolVersion; got != c.wantVersion {
				t.Errorf("negotiated %q, want %q", got, c.wantVersion)
			}
			names := harness.ToolNames(t, cs)
			want := []string{"counter", "echo", "t0000", "t0001", "t0002"}
			if len(names) != len(want) {
				t.Fatalf("tools %v, want %v", names, want)
			}
			res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "hi"}})
			if err != nil || harness.Text(t, res) != "echo:hi" {
				t.Fatalf("echo: %v %v", res, err)
			}
			res, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "t0002"})
			if err != nil || harness.Text(t, res) != "t0002" {
				t.Fatalf("t0002: %v %v", res, err)
			}
			if cfg := b.Config(); cfg.URL != b.URL || cfg.Name != "b" {
				t.Errorf("Config() = %+v", cfg)
			}
		})
	}
}

// Close cuts a backend with a live session (and its GET stream) promptly,
// and is idempotent.
func TestBackendCloseIsPromptAndIdempotent(t *testing.T) {
	b := harness.StartBackend(t, "b", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	cs := connectDirect(t, b.URL, "2025-11-25")
	done := make(chan struct{})
	go func() {
		b.Close()
		b.Close()
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close hangs")
	}
	if _, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "echo"}); err == nil {
		t.Fatal("call succeeded on a closed backend")
	}
	if _, err := http.Get(b.URL); err == nil {
		t.Fatal("closed backend still accepts connections")
	}
}
