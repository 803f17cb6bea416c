package tracing

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/grpc"
)

func newRecorder(t *testing.T) (*tracetest.SpanRecorder, trace.Tracer) {
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	return rec, tp.Tracer("test")
}

// testExchanges names the tests' Exchanges.
var testExchanges = &Exchanges{}

// TestExchangeRegistryWasProcessWide pins the registry every server in a
// process shared: one server's request found another server's Exchange by
// its id. Each server has its own Exchanges now.
func TestExchangeRegistryWasProcessWide(t *testing.T) {
	t.Parallel()
	_, tracer := newRecorder(t)
	var a, b Exchanges
	r := httptest.NewRequest("POST", "/mcp", nil)
	x := a.Begin(tracer, r, "legacy", "", "")
	defer x.End(200, "", func(Outcome) {})
	require.Same(t, x, a.Lookup(r.Header))
	require.Nil(t, b.Lookup(r.Header), "another server found this server's Exchange")
	require.Nil(t, (*Exchanges)(nil).Lookup(r.Header))
}

// A client cannot name another request's Exchange: Begin overwrites the
// header, and after End the Exchange is gone.
func TestBeginOverwritesAClientSentExchangeHeader(t *testing.T) {
	_, tracer := newRecorder(t)
	victim := testExchanges.Begin(tracer, httptest.NewRequest("POST", "/mcp", nil), "legacy", "", "")
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Header.Set(ExchangeHeader, victim.id)
	x := testExchanges.Begin(tracer, r, "legacy", "", "")
	require.Same(t, x, testExchanges.Lookup(r.Header))
	require.NotSame(t, victim, testExchanges.Lookup(r.Header))
	x.End(200, "", func(Outcome) {})
	require.Nil(t, testExchanges.Lookup(r.Header))
	victim.End(200, "", func(Outcome) {})
}

// Reports after End change nothing (a go-sdk notification handled after
// its 202), and a 202 keeps only what the headers said (or
// ObserveNotification, below).
func TestReportsAfterEndAreIgnored(t *testing.T) {
	rec, tracer := newRecorder(t)
	x := testExchanges.Begin(tracer, httptest.NewRequest("POST", "/mcp", nil), "legacy", "", "")
	x.Observe("notifications/initialized", "", nil)
	var out Outcome
	x.End(http.StatusAccepted, "", func(o Outcome) { out = o })
	require.Equal(t, Outcome{}, out, "a 202 is labelled by the headers alone, whoever observed first")
	x.Observe("tools/call", "x", nil)
	x.Fail("-32603")
	require.Len(t, rec.Ended(), 1)
	require.Equal(t, "mcp POST", rec.Ended()[0].Name())
}

// A 202 is counted under the notification reported before the go-sdk
// saw it; a request the core cancelled, or one that ends while its go-sdk
// handler still runs, is cancelled, never failed.
func TestNotificationAndCancelledOutcomes(t *testing.T) {
	_, tracer := newRecorder(t)
	end := func(x *Exchange, status int) (out Outcome) {
		x.End(status, "", func(o Outcome) { out = o })
		return out
	}
	x := testExchanges.Begin(tracer, httptest.NewRequest("POST", "/mcp", nil), "legacy", "", "")
	x.ObserveNotification("notifications/cancelled", nil)
	x.Observe("notifications/cancelled", "", nil) // the go-sdk, before the 202
	require.Equal(t, Outcome{Method: "notifications/cancelled"}, end(x, http.StatusAccepted))
	for _, report := range []func(*Exchange){
		func(x *Exchange) { x.Fail("-32603"); x.Cancel() },
		func(x *Exchange) { x.Handle() }, // never returned
	} {
		x := testExchanges.Begin(tracer, httptest.NewRequest("POST", "/mcp", nil), "legacy", "", "")
		x.Observe("tools/call", "t", nil)
		report(x)
		require.Equal(t, Outcome{Method: "tools/call", Cancelled: true}, end(x, http.StatusOK))
	}
}

// Transport adds traceparent only to requests whose context carries a span.
func TestTransportInjectsOnlyTracedRequests(t *testing.T) {
	_, tracer := newRecorder(t)
	got := make(chan string, 2)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { got <- r.Header.Get("traceparent") }))
	t.Cleanup(hs.Close)
	hc := &http.Client{Transport: &Transport{Base: http.DefaultTransport}}
	do := func(ctx context.Context) {
		req, _ := http.NewRequestWithContext(ctx, "GET", hs.URL, nil)
		resp, err := hc.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
	do(context.Background())
	require.Empty(t, <-got)
	ctx, span := tracer.Start(context.Background(), "call")
	do(ctx)
	span.End()
	require.Equal(t, "00-"+span.SpanContext().TraceID().String()+"-"+span.SpanContext().SpanID().String()+"-01", <-got)
}

// With tracing off the provider is a no-op: spans record nothing.
func TestNewProviderOffIsNoop(t *testing.T) {
	tp, shutdown, err := NewProvider(context.Background(), config.Tracing{}, "test")
	require.NoError(t, err)
	_, span := tp.Tracer("x").Start(context.Background(), "s")
	require.False(t, span.IsRecording())
	require.NoError(t, shutdown(context.Background()))
}

// With tracing on, spans reach an OTLP/HTTP collector at the configured
// endpoint, a base URL like OTEL_EXPORTER_OTLP_ENDPOINT (flushed by
// shutdown).
func TestNewProviderExportsOTLPOverHTTP(t *testing.T) {
	paths := make(chan string, 8)
	collector := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		paths <- r.URL.Path + " " + r.Header.Get("Content-Type")
		w.Header().Set("Content-Type", "application/x-protobuf")
	}))
	t.Cleanup(collector.Close)
	one := 1.0
	cfg := config.Tracing{Enabled: true, Endpoint: collector.URL, Protocol: config.ProtocolHTTPProtobuf, SampleRatio: &one, ServiceName: "vmcp-test"}
	tp, shutdown, err := NewProvider(context.Background(), cfg, "test")
	require.NoError(t, err)
	_, span := tp.Tracer("x").Start(context.Background(), "s")
	require.True(t, span.IsRecording())
	span.End()
	require.NoError(t, shutdown(context.Background()))
	require.Equal(t, "/v1/traces application/x-protobuf", <-paths)
}

// traceService is an OTLP/gRPC collector that reports each export.
type traceService struct {
	coltrace.UnimplementedTraceServiceServer
	got chan int
}

func (s *traceService) Export(_ context.Context, req *coltrace.ExportTraceServiceRequest) (*coltrace.ExportTraceServiceResponse, error) {
	s.got <- len(req.GetResourceSpans())
	return &coltrace.ExportTraceServiceResponse{}, nil
}

// protocol grpc exports over OTLP/gRPC.
func TestNewProviderExportsOTLPOverGRPC(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	svc := &traceService{got: make(chan int, 8)}
	gs := grpc.NewServer()
	coltrace.RegisterTraceServiceServer(gs, svc)
	go func() { _ = gs.Serve(lis) }()
	t.Cleanup(gs.Stop)
	cfg := config.Tracing{Enabled: true, Endpoint: "http://" + lis.Addr().String(), Protocol: config.ProtocolGRPC, ServiceName: "vmcp-test"}
	tp, shutdown, err := NewProvider(context.Background(), cfg, "test")
	require.NoError(t, err)
	_, span := tp.Tracer("x").Start(context.Background(), "s")
	span.End()
	require.NoError(t, shutdown(context.Background()))
	require.Equal(t, 1, <-svc.got)
}

// BenchmarkExchangeNoop is the endpoint's per-request cost with tracing
// off: Begin, one Observe, a backend span start and end, End.
func BenchmarkExchangeNoop(b *testing.B) {
	tp, _, _ := NewProvider(context.Background(), config.Tracing{}, "test")
	tracer := tp.Tracer("x")
	r := httptest.NewRequest("POST", "/mcp", nil)
	b.ReportAllocs()
	for b.Loop() {
		x := testExchanges.Begin(tracer, r, "legacy", "", "")
		x.Observe("tools/call", "echo", nil)
		_, end := StartBackend(context.Background(), testExchanges.Lookup(r.Header), Call{Method: "tools/call", Name: "echo", Backend: "a"})
		end(nil)
		x.End(200, "", func(Outcome) {})
	}
}
