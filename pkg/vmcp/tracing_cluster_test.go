package vmcp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"
)

// startNode starts a cluster node over Redis at redisURL (key prefix
// prefix) with backend b, tracing into opts' provider.
func startNode(t *testing.T, name, redisURL, prefix string, opts vmcp.Options, b config.Backend) *harness.VMCP {
	var h http.Handler = http.NotFoundHandler()
	hs := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.ServeHTTP(w, r) }))
	base := "http://" + hs.Listener.Addr().String()
	cfg := &config.Config{Listen: hs.Listener.Addr().String(), Backends: []config.Backend{b}}
	cfg.Cluster = config.Cluster{RedisURL: redisURL, NodeID: name, AdvertiseURL: base, KeyPrefix: prefix}
	cfg.MRTR.StateKey = "tracing-test-state-key-0123456789abcdef"
	cfg.ApplyDefaults()
	opts.StartWait = 5 * time.Second
	srv, err := vmcp.New(cfg, opts)
	require.NoError(t, err)
	h = srv.Handler()
	hs.Start()
	t.Cleanup(func() { _ = srv.Close(); hs.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, srv.WaitReady(ctx))
	return &harness.VMCP{URL: base + cfg.Path, Base: base, Server: srv, Config: cfg}
}

// A session request that reaches another node is forwarded to the owner
// with the forwarding node's span as traceparent: the owner's server span
// is its child, in the client's trace.
func TestTracingForwardedSessionRequestIsTheOwnersParent(t *testing.T) {
	log, opts := newSpanLog(t)
	redisURL := clustertest.URL(t)
	prefix := clustertest.Prefix(t, redisURL)
	b := startTracedBackend(t, false)
	owner := startNode(t, "n1", redisURL, prefix, opts, b.config())
	other := startNode(t, "n2", redisURL, prefix, opts, b.config())
	cs := connectTraced(t, owner, "2025-11-25", nil)

	req, err := http.NewRequest(http.MethodPost, other.URL, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"text":"hi"}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", cs.ID())
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	served := log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	forwarded := log.awaitWhere(t, "forwarded", 1, func(s sdktrace.ReadOnlySpan) bool { return attrs(s)["vmcp.forwarded"] == "true" })[0]
	require.Equal(t, "mcp POST", forwarded.Name(), "the forwarding node does not read the body")
	require.Equal(t, forwarded.SpanContext().TraceID(), served.SpanContext().TraceID())
	require.Equal(t, forwarded.SpanContext().SpanID(), served.Parent().SpanID(), "the owner's span is the forwarding node's child")
}

// With telemetry.tracing enabled and no injected provider, vmcp exports
// its spans over OTLP/HTTP to the configured collector, flushed by Close.
func TestTracingConfiguredExportsToOTLPCollectorOnClose(t *testing.T) {
	exports := make(chan string, 16)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		exports <- r.URL.Path
	}))
	t.Cleanup(collector.Close)
	b := startTracedBackend(t, false)
	cfg := &config.Config{Listen: "127.0.0.1:0", Backends: []config.Backend{b.config()}}
	cfg.Telemetry.Tracing = config.Tracing{Enabled: true, Endpoint: collector.URL}
	cfg.ApplyDefaults()
	srv, err := vmcp.New(cfg, vmcp.Options{StartWait: 5 * time.Second})
	require.NoError(t, err)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(hs.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	require.NoError(t, srv.WaitReady(ctx))
	v := &harness.VMCP{URL: hs.URL + cfg.Path, Base: hs.URL, Server: srv, Config: cfg}
	cs := connectTraced(t, v, "2025-11-25", nil)
	echo(t, cs, "alpha_echo", nil)
	require.NoError(t, cs.Close())
	require.NoError(t, srv.Close())
	select {
	case p := <-exports:
		require.Equal(t, "/v1/traces", p)
	case <-time.After(10 * time.Second):
		t.Fatal("no OTLP export reached the collector")
	}
	require.NotEmpty(t, b.traceparents(), "the backend got vmcp's span")
}
