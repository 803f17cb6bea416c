package harness

import (
	"context"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
)

// readyWait bounds how long StartVMCP waits for a first ready backend.
const readyWait = 10 * time.Second

// connectTimeout bounds a client's connect (discover/initialize).
const connectTimeout = 30 * time.Second

// VMCP is a running vmcp on a loopback httptest server.
type VMCP struct {
	URL    string         // full MCP endpoint URL, including the path
	Base   string         // http://host:port, for /healthz and /readyz
	Server *vmcp.Server   // the running server
	Config *config.Config // the config it was built from (do not mutate)

	hs *httptest.Server
}

// StartVMCP builds a config over the given backends (defaults applied, then
// mutate, which may be nil, may edit it), starts vmcp.New on an httptest
// server, waits until every backend has made its first connection attempt
// and at least one is connected (or 10s),
// and closes everything with t.Cleanup. vmcp's logs are discarded.
func StartVMCP(t testing.TB, mutate func(*config.Config), backends ...config.Backend) *VMCP {
	t.Helper()
	return StartVMCPWithOptions(t, vmcp.Options{}, mutate, backends...)
}

// StartVMCPWithOptions is StartVMCP with run-time options, for example
// vmcp.Options{Logger: logr.FromSlogHandler(h)} to capture vmcp's logs.
func StartVMCPWithOptions(t testing.TB, opts vmcp.Options, mutate func(*config.Config), backends ...config.Backend) *VMCP {
	t.Helper()
	cfg := &config.Config{Listen: "127.0.0.1:0", Backends: append([]config.Backend(nil), backends...)}
	cfg.ApplyDefaults()
	if mutate != nil {
		mutate(cfg)
	}
	srv, err := vmcp.New(cfg, opts)
	if err != nil {
		t.Fatalf("harness: vmcp.New: %v", err)
	}
	hs := httptest.NewUnstartedServer(nil)
	hs.Config = srv.HTTPServer() // vmcp's own server settings (timeouts)
	hs.Start()
	v := &VMCP{URL: hs.URL + cfg.Path, Base: hs.URL, Server: srv, Config: cfg, hs: hs}
	t.Cleanup(func() {
		_ = srv.Close() // ends client sessions and their backend sessions
		closeHTTP(hs)
	})
	ctx, cancel := context.WithTimeout(context.Background(), readyWait)
	defer cancel()
	_ = srv.WaitSettled(ctx) // every backend tried once, as tests expect
	if err := srv.WaitReady(ctx); err != nil {
		t.Logf("harness: vmcp not ready after %s (no backend connected); continuing", readyWait)
	}
	return v
}

// Connect opens a go-sdk client session to vmcp and closes it with
// t.Cleanup. version "" uses the SDK default negotiation (it tries
// 2026-07-28 first and may fall back); any other value, such as
// "2025-11-25", pins that Legacy revision through
// ClientSessionOptions.ProtocolVersion. opts may be nil; then the client
// declares no capabilities (&mcp.ClientCapabilities{}), rather than the
// SDK's default roots capability.
func (v *VMCP) Connect(t testing.TB, version string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	if opts == nil {
		opts = &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "harness-client", Version: "test"}, opts)
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	tr := &mcp.StreamableClientTransport{Endpoint: v.URL, HTTPClient: v.hs.Client()}
	cs, err := client.Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		t.Fatalf("harness: connect to vmcp (version %q): %v", version, err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}
