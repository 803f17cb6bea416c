package tracing

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// metaCarrier reads trace context from a request's _meta (the MCP
// convention: params._meta.traceparent, tracestate, baggage).
type metaCarrier map[string]any

func (m metaCarrier) Get(key string) string {
	s, _ := m[key].(string)
	return s
}

func (m metaCarrier) Set(string, string) {} // read only

func (m metaCarrier) Keys() []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	return keys
}

// ObserveRawMeta is Observe for a request whose _meta is still raw JSON
// (nil: none); the _meta is decoded only if it may hold trace context.
func (x *Exchange) ObserveRawMeta(method, name string, meta json.RawMessage) {
	var m map[string]any
	if bytes.Contains(meta, []byte("traceparent")) || bytes.Contains(meta, []byte("baggage")) {
		_ = json.Unmarshal(meta, &m) // not an object: no parent from it
	}
	x.Observe(method, name, m)
}

// traceKeys are the _meta keys the MCP convention carries trace context in.
var traceKeys = []string{"traceparent", "tracestate", "baggage"}

// RewriteMetaRaw returns a request's raw _meta with its trace context
// (traceparent, tracestate, baggage) replaced by ctx's, so a backend that
// reads _meta (MCP convention) sees vmcp's span as parent, as the header
// says. A _meta without traceparent, or a ctx without a span, is returned
// as is (no decode).
func RewriteMetaRaw(ctx context.Context, meta json.RawMessage) json.RawMessage {
	if !bytes.Contains(meta, []byte("traceparent")) || !trace.SpanContextFromContext(ctx).IsValid() {
		return meta
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(meta, &m) != nil {
		return meta
	}
	if _, ok := m["traceparent"]; !ok {
		return meta
	}
	carrier := propagation.MapCarrier{}
	propagator.Inject(ctx, carrier)
	for _, k := range traceKeys {
		delete(m, k)
		if v, ok := carrier[k]; ok {
			m[k], _ = json.Marshal(v)
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return meta
	}
	return out
}

// RewriteMeta is RewriteMetaRaw for a decoded _meta, changed in place.
func RewriteMeta(ctx context.Context, meta map[string]any) {
	if _, ok := meta["traceparent"]; !ok || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	carrier := propagation.MapCarrier{}
	propagator.Inject(ctx, carrier)
	for _, k := range traceKeys {
		delete(meta, k)
		if v, ok := carrier[k]; ok {
			meta[k] = v
		}
	}
}

// withBaggage returns ctx with from's baggage, if any.
func withBaggage(ctx, from context.Context) context.Context {
	if b := baggage.FromContext(from); b.Len() > 0 {
		return baggage.ContextWithBaggage(ctx, b)
	}
	return ctx
}

// Transport injects the W3C trace context (traceparent, tracestate) and
// baggage of each request's context into its headers: vmcp's backend span
// becomes the parent of the backend's own server span. A request whose
// context has no span passes unchanged.
type Transport struct {
	Base http.RoundTripper
}

// RoundTrip implements http.RoundTripper.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	ctx := req.Context()
	if !tracedContext(ctx) {
		return t.Base.RoundTrip(req)
	}
	req = req.Clone(ctx) // a RoundTripper must not modify the caller's request
	propagator.Inject(ctx, propagation.HeaderCarrier(req.Header))
	return t.Base.RoundTrip(req)
}
