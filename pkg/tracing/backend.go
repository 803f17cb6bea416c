package tracing

import (
	"context"
	"errors"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
)

// Call describes one backend request for its span.
type Call struct {
	Method   string // JSON-RPC method
	Name     string // the backend's own tool or prompt name, or the URI
	Backend  string
	Revision string // the client's revision
	Via      string // the call core's transport
}

// StartBackend starts the client span of one backend request as a child
// of x's span and returns ctx carrying it (for propagation to an HTTP
// backend) and the func that ends it with the request's error. Without an
// Exchange (a request not from the endpoint) it does nothing.
func StartBackend(ctx context.Context, x *Exchange, c Call) (context.Context, func(error)) {
	if x == nil {
		return ctx, func(error) {}
	}
	if !x.traced() {
		return ctx, func(error) {} // tracing off, no client trace: nothing to record or pass on
	}
	ctx = x.Context(ctx)
	attrs := append(make([]attribute.KeyValue, 0, 7), semconv.McpMethodNameKey.String(c.Method), AttrBackend.String(c.Backend),
		AttrRevision.String(c.Revision), AttrVia.String(c.Via))
	ctx, span := x.tracer.Start(ctx, spanName(c.Method, c.Name), trace.WithSpanKind(trace.SpanKindClient),
		trace.WithAttributes(append(attrs, targetAttrs(c.Method, c.Name)...)...))
	return ctx, func(err error) {
		if err != nil {
			span.RecordError(err)
			span.SetAttributes(semconv.ErrorTypeKey.String(ErrorType(err)))
			span.SetStatus(codes.Error, err.Error())
		}
		span.End()
	}
}

// ErrorType is the error.type of err: its JSON-RPC code, or "_OTHER".
func ErrorType(err error) string {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return strconv.FormatInt(we.Code, 10)
	}
	return "_OTHER"
}
