package tracing

import (
	"net/http"
	"testing"

	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// TestUntracedExchangeAllocatedANoopSpan: with tracing off and no client
// trace context, starting a request's span allocated the no-op tracer's
// options and context on every request.
func TestUntracedExchangeAllocatedANoopSpan(t *testing.T) {
	r, _ := http.NewRequest(http.MethodPost, "http://vmcp/mcp", nil)
	x := testExchanges.Begin(noop.NewTracerProvider().Tracer("t"), r, "modern", "tools/call", "echo")
	defer x.End(http.StatusOK, "", func(Outcome) {})
	n := testing.AllocsPerRun(100, func() {
		x.span = nil
		x.started()
	})
	if n != 0 {
		t.Fatalf("%v allocations per span start; want none", n)
	}
	if trace.SpanFromContext(x.ctx).SpanContext().IsValid() {
		t.Fatal("an untraced request got a span context")
	}
}
