// Package tracing is vmcp's OpenTelemetry tracing: the tracer provider a
// server owns (OTLP over HTTP or gRPC, or a no-op one when tracing is off),
// the span of each client request at the MCP endpoint (Exchange), the
// child span of each backend request (StartBackend, called by the call
// core), and W3C trace context propagation to HTTP backends (Transport).
// Attribute names follow the OpenTelemetry MCP semantic conventions.
package tracing

import (
	"context"
	"fmt"
	"net/url"
	"strings"

	"github.com/vmcp/vmcp/pkg/config"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of vmcp's spans.
const ScopeName = "github.com/vmcp/vmcp"

// vmcp's own span attributes (the MCP conventions have no key for them).
const (
	AttrBackend   = attribute.Key("vmcp.backend")   // the backend a request went to
	AttrRevision  = attribute.Key("vmcp.revision")  // the client's revision: legacy or modern
	AttrVia       = attribute.Key("vmcp.via")       // the call core's transport: relay, session, direct, shared, parked
	AttrForwarded = attribute.Key("vmcp.forwarded") // true: forwarded to the node that serves it
)

// propagator reads and writes W3C traceparent, tracestate and baggage.
var propagator propagation.TextMapPropagator = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// NewProvider returns the tracer provider cfg asks for and its shutdown
// (which flushes spans not yet exported). With tracing off it is a no-op
// provider (no spans, no exporter). The OTLP exporter reads the
// OTEL_EXPORTER_OTLP_* variables (headers, timeout, TLS, and the endpoint
// unless cfg sets one). Errors name the exporter that failed.
func NewProvider(ctx context.Context, cfg config.Tracing, version string) (trace.TracerProvider, func(context.Context) error, error) {
	if !cfg.Enabled {
		return noop.NewTracerProvider(), func(context.Context) error { return nil }, nil
	}
	exp, err := newExporter(ctx, cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: %s exporter: %w", cfg.Protocol, err)
	}
	res, err := resource.New(ctx, resource.WithFromEnv(), resource.WithTelemetrySDK(),
		resource.WithAttributes(semconv.ServiceName(cfg.ServiceName), semconv.ServiceVersion(version)))
	if err != nil {
		return nil, nil, fmt.Errorf("tracing: resource: %w", err)
	}
	ratio := 1.0
	if cfg.SampleRatio != nil {
		ratio = *cfg.SampleRatio
	}
	tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(exp), sdktrace.WithResource(res),
		sdktrace.WithSampler(sdktrace.ParentBased(sdktrace.TraceIDRatioBased(ratio))))
	return tp, tp.Shutdown, nil
}

// newExporter is the OTLP exporter of cfg's protocol; an http/protobuf
// endpoint without a path gets the traces path /v1/traces.
func newExporter(ctx context.Context, cfg config.Tracing) (sdktrace.SpanExporter, error) {
	if cfg.Protocol == config.ProtocolGRPC {
		var opts []otlptracegrpc.Option
		if cfg.Endpoint != "" {
			opts = append(opts, otlptracegrpc.WithEndpointURL(cfg.Endpoint))
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	var opts []otlptracehttp.Option
	if e := cfg.Endpoint; e != "" {
		if u, err := url.Parse(e); err == nil && (u.Path == "" || u.Path == "/") {
			e = strings.TrimSuffix(e, "/") + "/v1/traces" // a base URL, as OTEL_EXPORTER_OTLP_ENDPOINT
		}
		opts = append(opts, otlptracehttp.WithEndpointURL(e))
	}
	return otlptracehttp.New(ctx, opts...)
}

// targetAttrs are the semantic-convention attributes of a request's
// target: the tool (gen_ai.tool.name, gen_ai.operation.name
// execute_tool), prompt (gen_ai.prompt.name) or resource URI
// (mcp.resource.uri) that method names.
func targetAttrs(method, name string) []attribute.KeyValue {
	if name == "" {
		return nil
	}
	switch method {
	case "tools/call":
		return []attribute.KeyValue{semconv.GenAIToolName(name), semconv.GenAIOperationNameExecuteTool}
	case "prompts/get":
		return []attribute.KeyValue{semconv.GenAIPromptName(name)}
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		return []attribute.KeyValue{semconv.McpResourceURI(name)}
	}
	return nil
}

// spanName is the conventions' span name: "{mcp.method.name} {target}",
// the target being a tool or prompt name (never a URI: high cardinality).
func spanName(method, name string) string {
	if name != "" && (method == "tools/call" || method == "prompts/get") {
		return method + " " + name
	}
	return method
}
