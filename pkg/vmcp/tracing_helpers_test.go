package vmcp_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
	"go.opentelemetry.io/otel/attribute"
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
	return l.awaitWhere(t, kind.String()+" "+name, n, func(s sdktrace.ReadOnlySpan) bool { return s.SpanKind() == kind && s.Name() == name })
}

// awaitWhere waits until n spans match and returns them; what describes
// them in a failure.
func (l *spanLog) awaitWhere(t *testing.T, what string, n int, match func(sdktrace.ReadOnlySpan) bool) []sdktrace.ReadOnlySpan {
	t.Helper()
	var found []sdktrace.ReadOnlySpan
	for _, s := range l.seen {
		if match(s) {
			found = append(found, s)
		}
	}
	timeout := time.After(20 * time.Second)
	for len(found) < n {
		select {
		case s := <-l.ended:
			l.seen = append(l.seen, s)
			if match(s) {
				found = append(found, s)
			}
		case <-timeout:
			var names []string
			for _, s := range l.seen {
				names = append(names, s.SpanKind().String()+" "+s.Name())
			}
			t.Fatalf("%d of %d spans %s ended; ended: %v", len(found), n, what, names)
		}
	}
	return found[:n]
}

func attrs(s sdktrace.ReadOnlySpan) map[attribute.Key]string {
	m := map[attribute.Key]string{}
	for _, kv := range s.Attributes() {
		m[kv.Key] = kv.Value.String()
	}
	return m
}

// tracedBackend is a go-sdk backend (stateful: Legacy; stateless: Modern
// capable) with the tools of newTracedServer on httptest, behind a handler
// that records the traceparent header of every request.
type tracedBackend struct {
	URL    string
	mu     sync.Mutex
	tps    []string
	leaked int // requests that carried vmcp's internal Vmcp-Exchange header
}

func startTracedBackend(t *testing.T, stateless bool) *tracedBackend {
	srv := newTracedServer()
	return serveTraced(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: stateless}))
}

// startTracedSSEBackend is startTracedBackend over the SSE transport
// (2024-11-05: the go-sdk path, never the relay); its config needs
// Transport sse.
func startTracedSSEBackend(t *testing.T) *tracedBackend {
	srv := newTracedServer()
	return serveTraced(t, mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
}

// newTracedServer has tools echo, boom (fails with a JSON-RPC error) and
// meta (returns the traceparent of the request's _meta).
func newTracedServer() *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "alpha", Version: "test"}, nil)
	harness.AddEcho(srv, "echo")
	srv.AddTool(&mcp.Tool{Name: "boom", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return nil, &jsonrpcError{}
	})
	srv.AddTool(&mcp.Tool{Name: "meta", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tp, _ := req.Params.Meta["traceparent"].(string)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: tp}}}, nil
	})
	return srv
}

func serveTraced(t *testing.T, h http.Handler) *tracedBackend {
	b := &tracedBackend{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b.mu.Lock()
		if tp := r.Header.Get("traceparent"); tp != "" {
			b.tps = append(b.tps, tp)
		}
		if r.Header.Get(tracing.ExchangeHeader) != "" {
			b.leaked++
		}
		b.mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	b.URL = hs.URL + "/mcp"
	return b
}

func (b *tracedBackend) config() config.Backend {
	return config.Backend{Name: "alpha", URL: b.URL, Transport: config.TransportStreamableHTTP}
}

// leakedExchange is how many requests carried Vmcp-Exchange (never any).
func (b *tracedBackend) leakedExchange() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.leaked
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
