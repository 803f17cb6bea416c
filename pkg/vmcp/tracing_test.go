package vmcp_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// spanLog records ended spans (tracetest.SpanRecorder) and signals each end,
// so a test waits for a span instead of polling.
type spanLog struct {
	*tracetest.SpanRecorder
	ended chan sdktrace.ReadOnlySpan
	seen  []sdktrace.ReadOnlySpan
}

func (l *spanLog) OnEnd(s sdktrace.ReadOnlySpan) {
	l.SpanRecorder.OnEnd(s)
	l.ended <- s
}

// newSpanLog returns a span log and the vmcp options that trace into it
// (sampling every span); the provider is shut down with t.Cleanup.
func newSpanLog(t *testing.T) (*spanLog, vmcp.Options) {
	l := &spanLog{SpanRecorder: tracetest.NewSpanRecorder(), ended: make(chan sdktrace.ReadOnlySpan, 4096)}
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(l), sdktrace.WithSampler(sdktrace.AlwaysSample()))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return l, vmcp.Options{TracerProvider: tp}
}

// await returns the first ended span named name of kind, waiting for it.
func (l *spanLog) await(t *testing.T, kind trace.SpanKind, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	return l.awaitN(t, kind, name, 1)[0]
}

// awaitN waits until n spans named name of kind have ended and returns them.
func (l *spanLog) awaitN(t *testing.T, kind trace.SpanKind, name string, n int) []sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	match := func(s sdktrace.ReadOnlySpan) {
		if s.SpanKind() == kind && s.Name() == name {
			found = append(found, s)
		}
	}
	for _, s := range l.seen {
		match(s)
	}
	timeout := time.After(20 * time.Second)
	for len(found) < n {
		select {
		case s := <-l.ended:
			l.seen = append(l.seen, s)
			match(s)
		case <-timeout:
			var names []string
			for _, s := range l.seen {
				names = append(names, s.SpanKind().String()+" "+s.Name())
			}
			t.Fatalf("%d of %d %s spans %q ended; ended: %v", len(found), n, kind, name, names)
		}
	}
	return found[:n]
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]string {
	m := map[attribute.Key]string{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value.Emit()
	}
	return m
}

// tracedBackend is a go-sdk backend (stateful: Legacy; stateless: Modern
// capable) with tools "echo" and "boom" (fails with a JSON-RPC error) on
// httptest, behind a handler that records the traceparent header of every
// request.
type tracedBackend struct {
	URL string
	mu  sync.Mutex
	tps []string
}

func startTracedBackend(t *testing.T, stateless bool) *tracedBackend {
	srv := mcp.NewServer(&mcp.Implementation{Name: "alpha", Version: "test"}, nil)
	harness.AddEcho(srv, "echo")
	srv.AddTool(&mcp.Tool{Name: "boom", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpcError{}
	})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless})
	b := &tracedBackend{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if tp := r.Header.Get("traceparent"); tp != "" {
			b.mu.Lock()
			b.tps = append(b.tps, tp)
			b.mu.Unlock()
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	b.URL = hs.URL + "/mcp"
	return b
}

func (b *tracedBackend) config() config.Backend {
	return config.Backend{Name: "alpha", URL: b.URL, Transport: config.TransportStreamableHTTP}
}

// traceparents returns the traceparent headers the backend received.
func (b *tracedBackend) traceparents() []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]string(nil), b.tps...)
}

// headerTransport adds fixed headers to every request (a traced client).
type headerTransport map[string]string

func (h headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range h {
		r.Header.Set(k, v)
	}
	return http.DefaultTransport.RoundTrip(r)
}

// connectTraced opens a go-sdk client session to v at version, sending headers.
func connectTraced(t *testing.T, v *harness.VMCP, version string, headers map[string]string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "traced-client", Version: "test"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	tr := &mcp.StreamableClientTransport{Endpoint: v.URL, HTTPClient: &http.Client{Transport: headerTransport(headers)}}
	cs, err := client.Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func echo(t *testing.T, cs *mcp.ClientSession, name string, meta mcp.Meta) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Meta: meta, Name: name, Arguments: map[string]any{"text": "hi"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
}

// requireChild checks that backend is a client span, child of server, for
// tools/call echo on alpha via via.
func requireChild(t *testing.T, server, backend sdktrace.ReadOnlySpan, via string) {
	t.Helper()
	require.Equal(t, server.SpanContext().TraceID(), backend.SpanContext().TraceID(), "one trace")
	require.Equal(t, server.SpanContext().SpanID(), backend.Parent().SpanID(), "the backend span is the client span's child")
	a := attrs(backend)
	require.Equal(t, "tools/call", a["mcp.method.name"])
	require.Equal(t, "echo", a["gen_ai.tool.name"], "the backend's own tool name")
	require.Equal(t, "alpha", a["vmcp.backend"])
	require.Equal(t, via, a["vmcp.via"])
}

// A Legacy call the relay serves: the endpoint's server span carries the
// MCP attributes, the call core's client span is its child, and the HTTP
// backend receives that child as its traceparent.
func TestTracingLegacyRelayedCallSpansAndBackendTraceparent(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, false)
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	cs := connectTraced(t, v, "2025-11-25", nil)
	echo(t, cs, "alpha_echo", nil)

	backend := log.await(t, trace.SpanKindClient, "tools/call echo")
	server := log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	requireChild(t, server, backend, "relay")
	a := attrs(server)
	require.Equal(t, "tools/call", a["mcp.method.name"])
	require.Equal(t, "alpha_echo", a["gen_ai.tool.name"])
	require.Equal(t, "execute_tool", a["gen_ai.operation.name"])
	require.Equal(t, "legacy", a["vmcp.revision"])
	require.Equal(t, "alpha", a["vmcp.backend"])
	require.Equal(t, cs.ID(), a["mcp.session.id"])
	require.Equal(t, "2025-11-25", a["mcp.protocol.version"])
	require.Equal(t, "http", a["network.protocol.name"])
	require.Equal(t, codes.Unset, server.Status().Code)

	want := "00-" + backend.SpanContext().TraceID().String() + "-" + backend.SpanContext().SpanID().String() + "-01"
	require.Contains(t, b.traceparents(), want, "the backend span is the backend's parent")
}

// A traceparent header from the client makes the client's span the parent
// of vmcp's, and the trace id reaches the backend.
func TestTracingClientTraceparentHeaderIsTheParent(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, false)
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	cs := connectTraced(t, v, "2025-11-25", map[string]string{"traceparent": "00-" + traceID + "-" + parentID + "-01"})
	echo(t, cs, "alpha_echo", nil)

	server := log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	require.Equal(t, traceID, server.SpanContext().TraceID().String())
	require.Equal(t, parentID, server.Parent().SpanID().String())
	require.True(t, server.Parent().IsRemote())
	var reached bool
	for _, tp := range b.traceparents() {
		reached = reached || strings.HasPrefix(tp, "00-"+traceID+"-")
	}
	require.True(t, reached, "the client's trace id reaches the backend: %v", b.traceparents())
}

// A traceparent in a relayed call's _meta (MCP convention) is the parent
// of vmcp's span, when the header has none.
func TestTracingRelayedCallMetaTraceparentIsTheParent(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, false)
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	cs := connectTraced(t, v, "2025-11-25", nil)
	const traceID, parentID = "5bf92f3577b34da6a3ce929d0e0e4737", "10f067aa0ba902b8"
	echo(t, cs, "alpha_echo", mcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01"})

	backend := log.await(t, trace.SpanKindClient, "tools/call echo")
	server := log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	requireChild(t, server, backend, "relay")
	require.Equal(t, traceID, server.SpanContext().TraceID().String())
	require.Equal(t, parentID, server.Parent().SpanID().String())
}

// A Legacy call to a stdio backend takes the go-sdk path: the go-sdk
// handler runs it on its own goroutine, yet the backend span is still the
// server span's child, and a traceparent in the request's _meta (MCP
// convention) is the server span's parent.
func TestTracingLegacyGoSDKPathStdioBackendWithMetaTraceparent(t *testing.T) {
	log, opts := newSpanLog(t)
	v := harness.StartVMCPWithOptions(t, opts, nil, harness.StdioBackend(t, "alpha"))
	cs := connectTraced(t, v, "2025-11-25", nil)
	const traceID, parentID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	echo(t, cs, "alpha_echo", mcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01"})

	backend := log.await(t, trace.SpanKindClient, "tools/call echo")
	server := log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	requireChild(t, server, backend, "session")
	require.Equal(t, traceID, server.SpanContext().TraceID().String(), "_meta.traceparent is the parent")
	require.Equal(t, parentID, server.Parent().SpanID().String())
	require.Equal(t, cs.ID(), attrs(server)["mcp.session.id"])
}

// A failed backend request records its error on the backend span and
// marks the client span failed.
func TestTracingBackendErrorIsRecorded(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, false)
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	cs := connectTraced(t, v, "2025-11-25", nil)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha_boom", Arguments: map[string]any{}})
	require.Error(t, err)

	backend := log.await(t, trace.SpanKindClient, "tools/call boom")
	require.Equal(t, codes.Error, backend.Status().Code)
	require.NotEmpty(t, backend.Events(), "RecordError adds an exception event")
	require.Equal(t, "exception", backend.Events()[0].Name)
	server := log.await(t, trace.SpanKindServer, "tools/call alpha_boom")
	require.Equal(t, codes.Error, server.Status().Code)
	require.NotEmpty(t, attrs(server)["error.type"])
}

// jsonrpcError is a tool handler failure the go-sdk server sends as a
// JSON-RPC error.
type jsonrpcError struct{}

func (*jsonrpcError) Error() string { return "boom failed" }

// Tracing is off by default: nothing is propagated to a backend when the
// client sent no trace context.
func TestTracingOffByDefaultSendsNoTraceparent(t *testing.T) {
	b := startTracedBackend(t, false)
	v := harness.StartVMCP(t, nil, b.config())
	require.False(t, v.Config.Telemetry.Tracing.Enabled)
	cs := connectTraced(t, v, "2025-11-25", nil)
	echo(t, cs, "alpha_echo", nil)
	require.Empty(t, b.traceparents())
}

// A Modern call: the server span takes method and tool from the Mcp-Method
// and Mcp-Name headers (the body is not decoded again), revision modern;
// the call core's backend span is its child (one direct POST to a Modern
// backend), and the backend receives it as its traceparent.
func TestTracingModernCallSpansAndBackendTraceparent(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, true)
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	cs := v.Connect(t, "", nil)
	require.Empty(t, cs.ID(), "a Modern client")
	echo(t, cs, "alpha_echo", nil)

	backend := log.await(t, trace.SpanKindClient, "tools/call echo")
	server := log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	requireChild(t, server, backend, "direct")
	a := attrs(server)
	require.Equal(t, "modern", a["vmcp.revision"])
	require.Equal(t, "tools/call", a["mcp.method.name"])
	require.Equal(t, "alpha_echo", a["gen_ai.tool.name"])
	require.Equal(t, "2026-07-28", a["mcp.protocol.version"])
	require.Equal(t, "alpha", a["vmcp.backend"])
	require.Empty(t, a["mcp.session.id"], "stateless")
	require.Equal(t, "modern", attrs(backend)["vmcp.revision"])

	want := "00-" + backend.SpanContext().TraceID().String() + "-" + backend.SpanContext().SpanID().String() + "-01"
	require.Contains(t, b.traceparents(), want, "the backend span is the backend's parent")
}

// A Modern call over the backend's shared control connection (a stdio
// backend) is traced the same way.
func TestTracingModernSharedConnectionCallSpans(t *testing.T) {
	log, opts := newSpanLog(t)
	v := harness.StartVMCPWithOptions(t, opts, nil, harness.StdioBackend(t, "alpha"))
	cs := v.Connect(t, "", nil)
	echo(t, cs, "alpha_echo", nil)
	backend := log.await(t, trace.SpanKindClient, "tools/call echo")
	server := log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	requireChild(t, server, backend, "shared")
}

// Regression: a Legacy request without params (tools/list sent bare) has
// typed-nil params in the go-sdk middleware; observing it must not panic.
func TestTracingLegacyRequestWithoutParamsIsServed(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, false)
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	post := func(sid, body string) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodPost, v.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp, string(data)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp, body := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "alpha_echo")
	require.Equal(t, sid, attrs(log.await(t, trace.SpanKindServer, "tools/list"))["mcp.session.id"])
}
