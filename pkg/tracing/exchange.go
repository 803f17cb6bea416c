package tracing

import (
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/audit"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/propagation"
	semconv "go.opentelemetry.io/otel/semconv/v1.41.0"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// ExchangeHeader names, on the inbound request only, the Exchange the
// request belongs to: the go-sdk server hands its handlers the request's
// header but not its context, so the call core and the Legacy middleware
// find the Exchange through it. The endpoint overwrites any value a client
// sends; it is never forwarded to a backend (not a forward_headers name
// anyone needs).
const ExchangeHeader = "Vmcp-Exchange"

// Exchange is one client request at the MCP endpoint: its server span and
// what the dispatchers and the call core learn while serving it (method,
// target, backend, failure). The span starts when the first of them
// reports (so a parent in the request's _meta can still be taken) or when
// the request ends, with the request's arrival as its start time. Safe for
// concurrent use; reports after End are ignored.
type Exchange struct {
	reg       *Exchanges // where it is named while served
	tracer    trace.Tracer
	start     time.Time
	id        string
	verb      string          // the HTTP method
	parent    context.Context // the client's traceparent and baggage (header)
	revision  string
	proto     string // HTTP/1.1, HTTP/2.0
	version   string // the MCP-Protocol-Version header
	mu        sync.Mutex
	span      trace.Span // nil until started
	ctx       context.Context
	method    string
	name      string
	header    [2]string // method and name the headers gave
	backend   string
	errType   string
	ended     bool
	forwarded bool   // served by another node (Forward)
	observed  bool   // method reported by a dispatcher or the core
	notified  string // the notification's method, reported before the go-sdk saw it (ObserveNotification)
	handling  int    // go-sdk handlers serving the request that have not returned (Handle)
	cancelled bool   // the client's side cut the request short (Cancel)

	// For the audit log only (audit.go).
	client    any              // the Modern client's _meta clientInfo as reported (Observe), decoded by Facts
	decision  audit.Decision   // what vmcp decided on it (Decide)
	principal *audit.Principal // who it speaks for, once past authentication (Admit)
	members   []Member         // a 2025-03-26 batch's requests served through Do (AddMember)
	idle      chan struct{}    // closed when handling drops to 0 (Idle)
}

// Exchanges names one server's Exchanges while they are served (Begin,
// Lookup); each server has its own, so ids and lookups never cross
// servers in one process. The zero value is ready; a nil one finds none.
type Exchanges struct {
	m  sync.Map // id → *Exchange, while the request is served
	id atomic.Uint64
}

// Begin starts the Exchange of r at the endpoint and names it in r's
// header (ExchangeHeader); revision is legacy or modern. method and name
// are what the headers tell (Mcp-Method, Mcp-Name on Modern; "" if
// unknown). The caller must End it.
func (e *Exchanges) Begin(tracer trace.Tracer, r *http.Request, revision, method, name string) *Exchange {
	x := &Exchange{reg: e, tracer: tracer, start: time.Now(), verb: r.Method, revision: revision, method: method, name: name,
		header: [2]string{method, name}, proto: r.Proto, version: r.Header.Get("Mcp-Protocol-Version")}
	x.id = strconv.FormatUint(e.id.Add(1), 36)
	r.Header[ExchangeHeader] = []string{x.id}
	x.parent = context.Background()
	if len(r.Header["Traceparent"]) > 0 || len(r.Header["Baggage"]) > 0 {
		x.parent = propagator.Extract(x.parent, propagation.HeaderCarrier(r.Header))
	}
	e.m.Store(x.id, x)
	return x
}

// Started is when the request arrived.
func (x *Exchange) Started() time.Time { return x.start }

// Lookup returns the Exchange named in h (the inbound request's header, as
// the go-sdk server hands it to handlers), or nil.
func (e *Exchanges) Lookup(h http.Header) *Exchange {
	if e == nil || h == nil {
		return nil
	}
	v := h[ExchangeHeader]
	if len(v) != 1 {
		return nil
	}
	v0, _ := e.m.Load(v[0])
	x, _ := v0.(*Exchange)
	return x
}

// Observe reports the JSON-RPC method and target (tool or prompt name,
// resource URI; "" if none) the request turned out to carry; meta is the
// request's _meta (nil if none), whose traceparent is the parent when the
// header had none (MCP convention). The first report wins.
func (x *Exchange) Observe(method, name string, meta map[string]any) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.ended || x.observed {
		return
	}
	x.observed, x.method, x.name = true, method, name
	x.client = meta[mcp.MetaKeyClientInfo] // decoded only for the audit log (Facts)
	if !trace.SpanContextFromContext(x.parent).IsValid() && meta != nil {
		x.parent = propagator.Extract(x.parent, metaCarrier(meta))
	}
	x.started()
}

// ObserveNotification is ObserveRawMeta for a notification, reported
// before the go-sdk handler sees it: a request answered 202 is counted
// under this method, whereas what the go-sdk reports of a notification
// may come before that answer or after it.
func (x *Exchange) ObserveNotification(method string, meta json.RawMessage) {
	if x == nil {
		return
	}
	x.ObserveRawMeta(method, "", meta)
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.ended {
		x.notified = method
	}
}

// Backend reports the backend serving the request.
func (x *Exchange) Backend(name string) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.ended {
		x.backend = name
	}
}

// Fail reports that the request failed; errType is the JSON-RPC error code
// or another short, low-cardinality cause.
func (x *Exchange) Fail(errType string) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.ended && x.errType == "" {
		x.errType = errType
	}
}

// Cancel reports that the request's client cut it short (it cancelled
// the request, left, or its session ended): it is counted as cancelled,
// whatever failure is reported of it.
func (x *Exchange) Cancel() {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.ended {
		x.cancelled = true
	}
}

// Handle reports that a go-sdk handler began serving the request (the
// go-sdk may end the HTTP request before its handler returns); the func
// reports its return. A request that ends while a handler still serves it
// is cancelled: its client left before the answer.
func (x *Exchange) Handle() (returned func()) {
	if x == nil {
		return func() {}
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	x.handling++
	return func() {
		x.mu.Lock()
		defer x.mu.Unlock()
		x.handling--
		if x.handling == 0 && x.idle != nil {
			close(x.idle)
			x.idle = nil
		}
	}
}

// Idle returns a channel closed once no go-sdk handler serves the request
// (at once if none does): a batch's members may end after its HTTP
// request did, when the client left early.
func (x *Exchange) Idle() <-chan struct{} {
	x.mu.Lock()
	defer x.mu.Unlock()
	ch := make(chan struct{})
	if x.handling == 0 {
		close(ch)
		return ch
	}
	if x.idle == nil {
		x.idle = ch
	}
	return x.idle
}

// Context returns ctx carrying the request's span (started now if need be)
// and the client's baggage, the parent of the backend request's span.
func (x *Exchange) Context(ctx context.Context) context.Context {
	if x == nil {
		return ctx
	}
	x.mu.Lock()
	sctx := x.started()
	x.mu.Unlock()
	ctx = trace.ContextWithSpan(ctx, trace.SpanFromContext(sctx))
	return withBaggage(ctx, sctx)
}

// Forward puts the request's span context into h, the header of the
// request as it is forwarded to another node (the session's owner, a
// parked call's node), so that node's span is this one's child.
func (x *Exchange) Forward(h http.Header) {
	if x == nil || !x.traced() {
		return
	}
	propagator.Inject(x.Context(context.Background()), propagation.HeaderCarrier(h))
	x.mu.Lock()
	x.forwarded = true
	x.mu.Unlock()
}

// traced reports whether the request's span records or carries a trace
// context (the client's) or baggage to pass on.
func (x *Exchange) traced() bool {
	x.mu.Lock()
	defer x.mu.Unlock()
	span := trace.SpanFromContext(x.started())
	return span.IsRecording() || span.SpanContext().IsValid() || baggage.FromContext(x.parent).Len() > 0
}

// started starts the span once (x.mu held) and returns its context.
func (x *Exchange) started() context.Context {
	if x.span == nil && x.untraced() {
		x.ctx, x.span = x.parent, trace.SpanFromContext(x.parent) // what a no-op tracer gives, without its allocations
	}
	if x.span == nil {
		x.ctx, x.span = x.tracer.Start(x.parent, "mcp", trace.WithSpanKind(trace.SpanKindServer), trace.WithTimestamp(x.start))
		if x.span.IsRecording() { // the attributes cost nothing with tracing off
			_, version, _ := strings.Cut(x.proto, "/")
			x.span.SetAttributes(AttrRevision.String(x.revision), semconv.HTTPRequestMethodKey.String(x.verb),
				semconv.NetworkProtocolName("http"), semconv.NetworkProtocolVersion(version), semconv.NetworkTransportTCP)
			if x.version != "" {
				x.span.SetAttributes(semconv.McpProtocolVersion(x.version))
			}
		}
	}
	return x.ctx
}

// untraced reports whether the span would be a no-op one with nothing to
// carry: tracing is off and the client sent no trace context.
func (x *Exchange) untraced() bool {
	_, off := x.tracer.(noop.Tracer)
	return off && !trace.SpanContextFromContext(x.parent).IsValid()
}

// Outcome is how a request ended: its method label and whether it failed
// or its client cut it short (never both).
type Outcome struct {
	Method    string // the JSON-RPC method; "" if no one reported it
	Failed    bool
	Cancelled bool
}

// End ends the request: status is the HTTP status written, sessionID the
// Legacy session (the response's Mcp-Session-Id on initialize). It hands
// record the outcome, then ends the span (status Error on a failure), so
// whoever sees the span ended sees the request counted; and forgets the
// Exchange.
func (x *Exchange) End(status int, sessionID string, record func(Outcome)) {
	x.reg.m.Delete(x.id)
	x.mu.Lock()
	defer x.mu.Unlock()
	x.ended = true
	if status == http.StatusAccepted { // a notification or response: the go-sdk may observe it after End, or before
		x.method, x.name = x.header[0], x.header[1]
		if x.notified != "" {
			x.method, x.name = x.notified, ""
		}
	}
	cancelled := x.cancelled || x.handling > 0
	failed := !cancelled && (status >= 400 || x.errType != "")
	record(Outcome{Method: x.method, Failed: failed, Cancelled: cancelled})
	x.started()
	if x.span.IsRecording() {
		x.annotate(status, sessionID, failed)
	}
	x.span.End()
}

// annotate sets the span's name and final attributes (x.mu held).
func (x *Exchange) annotate(status int, sessionID string, failed bool) {
	if x.method != "" {
		x.span.SetName(spanName(x.method, x.name))
		x.span.SetAttributes(semconv.McpMethodNameKey.String(x.method))
		x.span.SetAttributes(targetAttrs(x.method, x.name)...)
	} else {
		x.span.SetName("mcp " + x.verb) // a GET stream, a DELETE, a response
	}
	if sessionID != "" {
		x.span.SetAttributes(semconv.McpSessionID(sessionID))
	}
	if x.backend != "" {
		x.span.SetAttributes(AttrBackend.String(x.backend))
	}
	if x.forwarded {
		x.span.SetAttributes(AttrForwarded.Bool(true))
	}
	if status != 0 {
		x.span.SetAttributes(semconv.HTTPResponseStatusCode(status))
	}
	if failed {
		cause := x.errType
		if cause == "" {
			cause = strconv.Itoa(status)
		}
		x.span.SetAttributes(semconv.ErrorTypeKey.String(cause))
		x.span.SetStatus(codes.Error, cause)
	}
}

// tracedContext reports whether ctx carries a valid span context or baggage.
func tracedContext(ctx context.Context) bool {
	return trace.SpanContextFromContext(ctx).IsValid() || baggage.FromContext(ctx).Len() > 0
}
