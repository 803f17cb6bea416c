// Package upstream is the call core: the one seam through which vmcp sends
// a backend a request on a client's behalf, for both revisions. Both
// dispatchers translate their wire format into a Request; the core routes
// it on one catalogue snapshot (Route; a name the access policy hides from
// the principal is refused like an unknown one, one over a rate limit with
// the limit's error: Admit), chooses its transport
// (Via), and runs it (Call) with the backend's timeout, the client's
// cancellation, the forwarded headers, metrics, and the spec's JSON-RPC
// error naming the backend. Identity (the Request's Principal) is passed explicitly.
package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/audit"
	"github.com/vmcp/vmcp/pkg/backends"
	bsession "github.com/vmcp/vmcp/pkg/backends/session"
	"github.com/vmcp/vmcp/pkg/backends/transport"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/policy"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// Revision labels of the client's protocol revision in metrics.
const (
	RevisionLegacy = "legacy" // 2025-11-25 and earlier: sessions
	RevisionModern = "modern" // 2026-07-28 and later: stateless
)

// Request is one client request bound for a backend, as a dispatcher
// translates it from its wire format.
type Request struct {
	Method    string             // tools/call, prompts/get, resources/read, completion/complete, resources/(un)subscribe
	Name      string             // advertised tool or prompt name, or resource URI ("" for completion)
	Revision  string             // RevisionLegacy or RevisionModern
	Principal identity.Principal // who the request speaks for (anonymous without inbound auth)
	Header    http.Header        // the client's HTTP headers; only forward_headers reach a backend
	// Asks reports whether the client declared a capability a backend can
	// ask it for (elicitation, sampling, roots): a Modern client's call to
	// a backend that is not Modern HTTP then goes on a keyed session
	// (ViaKeyed), where the backend can ask.
	Asks bool
	// Decided, if set, is told what Route and Admit decided on the request
	// too (a 2025-03-26 batch member's own audit record).
	Decided func(audit.Decision)

	// What Do sends (the routing fields above say where).
	Target   *Target                 // set: routed already (Route, Pin); nil: Do routes
	Params   json.RawMessage         // the params object for the backend, without _meta
	Meta     json.RawMessage         // the _meta members the backend may see (an object; nil: none)
	Caps     json.RawMessage         // Modern: the client's clientCapabilities (a Modern backend's _meta)
	LogLevel string                  // Modern: the client's logLevel ("" none)
	AskCaps  *mcp.ClientCapabilities // Modern: what a Legacy backend session may ask the client (nil: none)
	Sessions *bsession.Set           // Legacy: the client session's own backend sessions
}

// Target is where a routed request goes.
type Target struct {
	Backend *backends.Backend
	Name    string    // the backend's own tool or prompt name, or the URI
	Tool    *mcp.Tool // tools/call: the advertised tool (nil otherwise)
	Via     Via       // the transport Route chose
}

// Core routes and runs backend requests. It is safe for concurrent use.
type Core struct {
	agg     *aggregator.Aggregator
	mgr     *backends.Manager
	metrics *telemetry.Metrics
	policy  *policy.Policy // nil: every principal may use everything
	own     OwnTool        // vmcp's own tools (own.go; nil: none)
	limiter Limiter        // rate limits (limit.go; nil: none)
	log     *slog.Logger

	sessions  *sessions          // Modern clients' keyed backend sessions (session.go)
	exchanges *tracing.Exchanges // the server's Exchanges (SetExchanges)
	ids       atomic.Int64       // ids of the requests Do sends
	highWater atomic.Int64       // the most messages ever queued in one Stream
}

// SetPolicy makes Route refuse what p does not allow the request's
// principal, with the error of an unknown name (call before serving).
func (c *Core) SetPolicy(p *policy.Policy) { c.policy = p }

// New returns the call core over agg's catalogue and mgr's backends,
// counting into metrics; it becomes mgr's Sender.
func New(agg *aggregator.Aggregator, mgr *backends.Manager, metrics *telemetry.Metrics) *Core {
	c := &Core{agg: agg, mgr: mgr, metrics: metrics, log: slog.Default()}
	c.sessions = newSessions(mgr, c.undeliverable)
	mgr.SetSender(c) // the backends' own subscriptions go through c (control.go)
	return c
}

// SetLogger sets where the core logs (call before serving).
func (c *Core) SetLogger(log *slog.Logger) { c.log = log }

// SetExchanges names where the core finds each request's Exchange (its
// server's; nil: none, nothing reported). Call before serving.
func (c *Core) SetExchanges(e *tracing.Exchanges) { c.exchanges = e }

// Close closes the keyed backend sessions of Modern clients; Do fails
// after for requests that need one.
func (c *Core) Close() { c.sessions.close() }

// QueueHighWater is the most messages one Stream ever held queued between
// its backend and its consumer (at most QueueCapacity).
func (c *Core) QueueHighWater() int { return int(c.highWater.Load()) }

// observeQueue records a Stream's queue length n.
func (c *Core) observeQueue(n int) {
	for {
		hw := c.highWater.Load()
		if int64(n) <= hw || c.highWater.CompareAndSwap(hw, int64(n)) {
			return
		}
	}
}

// undeliverable counts and logs (rate-limited) a message Do could not
// deliver to its backend or client.
func (c *Core) undeliverable(method, backend string, err error) {
	c.metrics.Undelivered.Report(c.log, method, backend, mcpmsg.DropReason(err), err)
}

// Route resolves req's advertised name on one catalogue snapshot and
// chooses its transport. An unknown tool or prompt is -32602 naming it
// (and the backends that are down); an unknown URI is the SDK's
// resource-not-found error (-32602). A name the policy does not allow the
// principal gets exactly the error of an unknown one (no existence oracle).
// A request over a rate limit is then refused (Limiter).
func (c *Core) Route(req *Request) (Target, error) {
	t, err := c.Resolve(req)
	if err != nil {
		return Target{}, err
	}
	return t, c.Admit(req, t)
}

// Resolve is Route without the rate limits, for a caller that learns from
// the Target whether it sends the request itself (the Legacy relay, else
// the go-sdk path Routes it): it calls Admit before sending.
func (c *Core) Resolve(req *Request) (Target, error) {
	rt, tool, found, err := c.lookup(req)
	switch {
	case err != nil:
		return Target{}, err
	case !found || rt.Own() || !c.allowed(req, rt.Backend): // own tools: CallOwn
		return Target{}, c.unknown(req)
	}
	return c.pin(req, rt.Backend, rt.Name, tool)
}

// Hidden is the error of an unknown name when req names an item of the
// catalogue that the policy hides from its principal, else nil: the check
// of Route for a path that resolves names itself.
func (c *Core) Hidden(req *Request) error {
	if c.policy == nil {
		return nil
	}
	if rt, _, found, err := c.lookup(req); err == nil && found && !rt.Own() && !c.allowed(req, rt.Backend) {
		return c.unknown(req)
	}
	return nil
}

// HiddenCompletion is the error of an unknown reference when the
// completion/complete params p refer to a prompt or resource the policy
// hides from principal pr, else nil (a reference the catalogue lacks is
// left to the caller, whose error is the same).
func (c *Core) HiddenCompletion(pr identity.Principal, p *mcp.CompleteParams) error {
	if c.policy == nil || p == nil || p.Ref == nil {
		return nil
	}
	cat := c.agg.For(pr.Key())
	_, backend, err := cat.Completion(p)
	if err != nil {
		return nil
	}
	kind, name := aggregator.KindResources, p.Ref.URI
	if p.Ref.Type == "ref/prompt" {
		kind, name = aggregator.KindPrompts, p.Ref.Name
	}
	if c.policy.Allows(pr, kind, backend, name) {
		return nil
	}
	_, _, err = aggregator.Empty().Completion(p) // exactly the unknown reference's error
	return err
}

// lookup resolves req's name on the catalogue its principal sees (the
// current one plus the principal's own per-principal backends).
func (c *Core) lookup(req *Request) (rt aggregator.Route, tool *mcp.Tool, found bool, err error) {
	cat := c.agg.For(req.Principal.Key())
	switch req.Method {
	case "tools/call":
		tool, rt, found = cat.Tool(req.Name)
	case "prompts/get":
		_, rt, found = cat.Prompt(req.Name)
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		rt, found = cat.Resource(req.Name)
	default:
		err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "upstream: " + req.Method + " is not routed by name"}
	}
	return rt, tool, found, err
}

// allowed reports whether the policy lets req's principal use req's name
// on backend, and tells the request's Exchange which rule decided (the
// audit log's decision).
func (c *Core) allowed(req *Request, backend string) bool {
	if c.policy == nil {
		return true
	}
	kind := aggregator.KindResources
	switch req.Method {
	case "tools/call":
		kind = aggregator.KindTools
	case "prompts/get":
		kind = aggregator.KindPrompts
	}
	ok, rule := c.policy.Decide(req.Principal, kind, backend, req.Name)
	c.decide(req, audit.Decision{Denied: !ok, By: audit.ByAuthorization, Rule: audit.RuleIndex(rule), Backend: backend})
	return ok
}

// decide tells req's Exchange, and req.Decided if set, what vmcp decided.
func (c *Core) decide(req *Request, d audit.Decision) {
	c.exchanges.Lookup(req.Header).Decide(d)
	if req.Decided != nil {
		req.Decided(d)
	}
}

// unknown is the error for a name the catalogue does not have.
func (c *Core) unknown(req *Request) error {
	switch req.Method {
	case "tools/call":
		return ErrUnknownTool(req.Name, c.mgr.Unavailable())
	case "prompts/get":
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown prompt %s", wire.Quote(req.Name))}
	}
	return mcp.ResourceNotFoundError(req.Name)
}

// Pin targets backend directly (a retry pinned by its requestState, or a
// completion routed by its reference) and chooses the transport. A
// request over a rate limit is refused here, before any backend sees it.
func (c *Core) Pin(req *Request, backend, name string, tool *mcp.Tool) (Target, error) {
	t, err := c.pin(req, backend, name, tool)
	if err != nil {
		return Target{}, err
	}
	return t, c.Admit(req, t)
}

// pin is Pin without the rate limits.
func (c *Core) pin(req *Request, backend, name string, tool *mcp.Tool) (Target, error) {
	b, err := c.mgr.Backend(backend)
	if err != nil {
		return Target{}, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	t := Target{Backend: b, Name: name, Tool: tool}
	t.Via = choose(req, t)
	return t, nil
}

// ErrUnknownTool is the error for a tools/call of a name the catalogue does
// not have (-32602); down names the backends that are down, if any.
func ErrUnknownTool(name, down string) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: fmt.Sprintf("unknown tool %s%s", wire.Quote(name), down)}
}

// Call runs send, the request's one exchange with t's backend: send's
// context is bounded by the backend's timeout, cancelled when ctx is (the
// client cancelled or left), carries the client's headers for the
// backend's forward_headers, and outlives the return briefly so the
// response stream drains. The outcome is counted once; an error is
// returned as the spec's JSON-RPC error naming the backend.
func Call[R any](c *Core, ctx context.Context, req *Request, t Target, send func(context.Context) (R, error)) (R, error) {
	ctx, done := c.Begin(ctx, req, t)
	cctx, release := backends.CallContext(transport.WithClientHeader(ctx, req.Header), t.Backend.Timeout())
	defer release()
	res, err := send(cctx)
	if err = done(err); err != nil {
		var zero R
		return zero, err
	}
	return res, nil
}

// Start begins one backend request that the caller performs itself (a
// relayed or parked call, whose context and stream it owns); the returned
// func records its outcome and returns err as the client's JSON-RPC error
// (nil stays nil; ErrNoResponse passes unwrapped). ErrNoResponse and an
// error marked ClientEnded are counted as cancelled, not as errors.
func (c *Core) Start(req *Request, t Target) func(err error) error {
	_, done := c.Begin(context.Background(), req, t)
	return done
}

// Begin is Start for a caller that sends on a context of its own: the
// returned ctx carries the backend request's span, a child of the client
// request's (the endpoint's tracing.Exchange named in req.Header), so that
// an HTTP backend receives it as its traceparent. A request that fails
// once ctx (the client's) has ended is counted as cancelled.
func (c *Core) Begin(ctx context.Context, req *Request, t Target) (context.Context, func(err error) error) {
	start, client := time.Now(), ctx
	backend := t.Backend.Name()
	leave := t.Backend.Enter() // a backend a reload retires drains first
	x := c.exchanges.Lookup(req.Header)
	x.Observe(req.Method, req.Name, nil)
	x.Backend(backend)
	ctx, end := tracing.StartBackend(ctx, x, tracing.Call{Method: req.Method, Name: t.Name, Backend: backend, Revision: req.Revision, Via: string(t.Via)})
	return ctx, func(err error) error {
		leave()
		c.metrics.BackendLatency.WithLabelValues(backend, req.Method).Observe(time.Since(start).Seconds())
		outcome := "ok"
		switch {
		case err == nil:
			end(nil)
		case cancelled(client, err):
			outcome = "cancelled" // not a backend failure
			if !errors.Is(err, ErrNoResponse) {
				err = mcpmsg.WireError(backend, err)
			}
			x.Cancel()
			end(nil)
		default:
			outcome = "error"
			c.metrics.BackendErrors.WithLabelValues(backend, req.Method, req.Revision).Inc()
			err = mcpmsg.WireError(backend, err)
			x.Fail(tracing.ErrorType(err))
			end(err)
		}
		c.metrics.BackendRequests.WithLabelValues(backend, req.Method, req.Revision, outcome).Inc()
		return err
	}
}

// cancelled reports whether err, a backend request's failure, is its
// client's doing: ErrNoResponse, an error marked ClientEnded, or any
// failure once the client's context has ended.
func cancelled(client context.Context, err error) bool {
	var ce clientEnded
	return errors.Is(err, ErrNoResponse) || errors.As(err, &ce) || client.Err() != nil
}

// ErrNoResponse ends a request the client cancelled: no response is due
// (notifications/cancelled: the receiver SHOULD NOT respond).
var ErrNoResponse = errors.New("request cancelled by the client; no response is sent")

// ClientEnded marks err as the end of a request its client's side cut
// short (the client left, or its session ended) where the context given
// to Begin does not tell (Start): the core counts it as cancelled. The
// client, if still there, gets err.
func ClientEnded(err error) error { return clientEnded{err} }

type clientEnded struct{ error }

func (e clientEnded) Unwrap() error { return e.error }
