// Package legacy serves Legacy MCP clients (2025-11-25, 2025-06-18,
// 2025-03-26) on the go-sdk's stateful StreamableHTTPHandler: initialize,
// Mcp-Session-Id, the GET stream and DELETE. Every Legacy client session has
// its own backend sessions; calls are routed by the shared catalogue.
package legacy

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/bulkgc"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/pagination"
	"github.com/vmcp/vmcp/pkg/policy"
	"github.com/vmcp/vmcp/pkg/shrink"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// Options configures the Legacy dispatcher.
type Options struct {
	Exchanges      *tracing.Exchanges             // the server's, to report what a request carries (nil: none)
	Implementation *mcp.Implementation            // serverInfo
	Instructions   string                         // initialize instructions
	PageSize       int                            // list page size (<= 0: everything on one page)
	IdleTimeout    time.Duration                  // session idle timeout
	MaxSessions    int                            // initialize beyond this fails
	MaxBodyBytes   int64                          // request body limit (413 beyond)
	Capabilities   func() *mcp.ServerCapabilities // from pkg/capabilities
	// Codec mints and checks the list cursors vmcp serves (the same codec
	// and key as the Modern dispatcher's; required).
	Codec *pagination.Codec
	// Policy filters lists per principal and refuses what it hides (nil:
	// every principal sees everything).
	Policy *policy.Policy
	Logger *slog.Logger //
	// EventStore keeps each session's SSE events for Last-Event-ID resume
	// (2025-11-25 transports, resumability; required: the cluster's).
	EventStore mcp.EventStore
	// OnSession, if set, is called when a client session starts (start
	// true, during initialize, with the initialize request's context, which
	// carries its identity.Principal: an error refuses the initialize with
	// its message) and when it ends (start false, a background context; the
	// error is ignored).
	OnSession func(ctx context.Context, id string, start bool) error
	// ProgressGrace is how long a call's progress token stays known
	// after its response, so late progress is dropped as such (> 0;
	// config.DefaultProgressGrace unless a test shortens it).
	ProgressGrace time.Duration
	// Core routes and sends every request to a backend (required: the
	// server's).
	Core *upstream.Core
	// Metrics counts undeliverable messages and relayed calls (required:
	// the server's).
	Metrics *telemetry.Metrics
	// Observe is receiving middleware run outside vmcp's own on the go-sdk
	// path (the endpoint's tracing and metrics read the method there).
	Observe mcp.Middleware
	// BulkGC makes registry syncs of many tools bulk phases of it (nil:
	// none).
	BulkGC *bulkgc.Limiter
}

// Dispatcher is the Legacy half of the vmcp endpoint.
type Dispatcher struct {
	relayIDs atomic.Int64 // the ids of requests the relay sends clients (newRelayID)
	opts     Options
	core     *upstream.Core
	metrics  *telemetry.Metrics
	agg      *aggregator.Aggregator
	mgr      *backends.Manager
	server   *mcp.Server
	handler  *mcp.StreamableHTTPHandler
	log      *slog.Logger

	regMu sync.Mutex // serialises sync
	reg   registered

	mu       sync.Mutex
	sessions map[string]*clientSession // by Mcp-Session-Id
	peak     shrink.Peak               // of sessions
	closed   bool
	wg       sync.WaitGroup // session watchers
}

// New builds the dispatcher, registers the current catalogue and follows
// its changes. opts must be complete (vmcp.New builds them from the config
// and pkg/config's defaults): New fills in no defaults of its own
// and panics naming what is missing.
func New(agg *aggregator.Aggregator, mgr *backends.Manager, opts Options) *Dispatcher {
	if missing := opts.missing(); len(missing) > 0 {
		panic("legacy: Options lack " + strings.Join(missing, ", "))
	}
	d := &Dispatcher{opts: opts, core: opts.Core, metrics: opts.Metrics, agg: agg, mgr: mgr, log: opts.Logger, sessions: map[string]*clientSession{}}
	d.server = mcp.NewServer(opts.Implementation, &mcp.ServerOptions{
		Instructions:            opts.Instructions,
		Logger:                  slog.New(minLevel{opts.Logger.Handler(), slog.LevelWarn}),
		PageSize:                opts.PageSize,
		Capabilities:            &mcp.ServerCapabilities{},
		CompletionHandler:       d.complete,
		SubscribeHandler:        d.subscribe,
		UnsubscribeHandler:      d.unsubscribe,
		RootsListChangedHandler: d.rootsListChanged,
	})
	d.server.AddReceivingMiddleware(d.lifecycle, d.setLevelMiddleware, d.availability, d.listMiddleware)
	if opts.Observe != nil {
		d.server.AddReceivingMiddleware(opts.Observe) // added last: outermost
	}
	d.server.AddSendingMiddleware(d.targeted)
	d.server.AddSendingMiddleware(d.ownListChanged) // outside targeted (ownviews.go)
	d.handler = mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return d.server }, &mcp.StreamableHTTPOptions{
		EventStore:          sessionEnds{opts.EventStore, d},
		MaxRequestBodyBytes: opts.MaxBodyBytes,
		Logger:              slog.New(minLevel{opts.Logger.Handler(), slog.LevelWarn}),
	})
	d.sync(agg.Current())
	agg.OnChange(func(_, cur *aggregator.Catalogue, _ []aggregator.Kind) { d.sync(cur) })
	agg.OnOwnerChange(d.ownerChanged)
	return d
}

// ServeHTTP serves initialize, session POSTs, the GET stream and DELETE;
// a request for a session not (or no longer) live here gets 404. A
// session POST pauses the session's idle timer, and is relayed (relay.go)
// when it can be, else served by the go-sdk handler.
func (d *Dispatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	id := r.Header.Get("Mcp-Session-Id")
	live := d.lookup(id)
	if id != "" && live == nil {
		// the SDK's own answer, also while it still closes a session that
		// ended here (it would answer a call on it 200 with no message)
		http.Error(w, "session not found", http.StatusNotFound)
		return
	}
	if live != nil { // the owner's request (the edge refused others)
		live.backends.Forward(r.Header)
	}
	if r.Method == http.MethodDelete {
		d.abortSession(id)
	}
	if r.Method == http.MethodPost && id != "" {
		if s := d.lookup(id); s != nil {
			s.setPrincipal(identity.From(r.Context()))
			s.idle.start()
			defer s.idle.end()
			handled, sdk := d.relay(w, r, s)
			if handled {
				return
			}
			if sdk != nil { // one set of in-flight ids for both paths
				key, _ := wire.IDKey(sdk.ID)
				mw := &mutableWriter{ResponseWriter: w}
				untrack, ok := s.relayState.track(key, tracked{mute: mw.mute})
				if !ok {
					_ = newEventWriter(w).fail(http.StatusBadRequest, sdk.ID, errDuplicateID)
					return
				}
				defer untrack()
				w = mw
			}
		}
	}
	d.handler.ServeHTTP(w, r)
}

// lookup returns the live client session id, or nil.
func (d *Dispatcher) lookup(id string) *clientSession {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.sessions[id]
}

// HasSession reports whether the client session id lives here.
func (d *Dispatcher) HasSession(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	_, ok := d.sessions[id]
	return ok
}

// SessionCount is the number of live Legacy client sessions.
func (d *Dispatcher) SessionCount() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.sessions)
}

// Close ends every client session and its backend sessions.
func (d *Dispatcher) Close() {
	for _, s := range d.live(true) {
		_ = s.front.Close()
	}
	d.wg.Wait()
}

// Abort cancels every session's in-flight backend calls (shutdown after the
// grace period): the SDK's session Close would otherwise wait for them.
func (d *Dispatcher) Abort() {
	for _, s := range d.live(false) {
		s.end()
	}
}

// live lists the registered sessions; closing refuses new ones from now on.
func (d *Dispatcher) live(closing bool) []*clientSession {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.closed = d.closed || closing
	all := make([]*clientSession, 0, len(d.sessions))
	for _, s := range d.sessions {
		all = append(all, s)
	}
	return all
}

// lifecycle is receiving middleware: it enforces sessions.max and
// registers the session on initialize, and answers initialize with the
// capabilities computed now (backends may have come or gone).
func (d *Dispatcher) lifecycle(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if method != "initialize" {
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if ss == nil {
			return next(ctx, method, req)
		}
		var header http.Header
		if x := req.GetExtra(); x != nil {
			header = x.Header
		}
		if err := d.admit(ctx, ss, header); err != nil {
			return nil, err
		}
		res, err := next(ctx, method, req)
		if err == nil {
			d.discover(ctx, ss)
		} else if !errors.As(err, new(*jsonrpc.Error)) {
			// the go-sdk refuses a second initialize with a plain error, which
			// it sends as code 0: the spec's code is -32600 (Invalid Request)
			err = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: err.Error()}
		}
		if ir, ok := res.(*mcp.InitializeResult); ok && err == nil && d.opts.Capabilities != nil {
			ir.Capabilities = d.opts.Capabilities()
		}
		return res, err
	}
}

// discover lists the per-principal backends for the principal of the
// session ss has just initialized, on its own backend sessions, so their
// tools are in its first lists (backends.Manager.DiscoverFor).
func (d *Dispatcher) discover(ctx context.Context, ss *mcp.ServerSession) {
	s := d.lookup(ss.ID())
	if s == nil {
		return
	}
	d.mgr.DiscoverFor(ctx, s.principal(), nil, s.backends)
	d.watchOwn(ctx, s) // list changes of its per-principal Modern backends (ownlisten.go)
	d.markAll(s)
	s.discovered.Store(true) // its own view's changes are told from now on (ownviews.go)
}

// admit registers a new client session, or fails when sessions.max is
// reached or OnSession refuses it (logged through Metrics.Throttled: a
// client can repeat it at will); header is the initialize request's (its
// forwarded headers go to the session's backend sessions).
func (d *Dispatcher) admit(ctx context.Context, ss *mcp.ServerSession, header http.Header) error {
	d.mu.Lock()
	if _, ok := d.sessions[ss.ID()]; ok {
		d.mu.Unlock()
		return nil
	}
	if d.closed {
		d.mu.Unlock()
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "vmcp is shutting down"}
	}
	if len(d.sessions) >= d.opts.MaxSessions {
		d.mu.Unlock()
		d.metrics.Throttled.Log(d.log, slog.LevelWarn, "initialize_refused_max", "session limit reached; initialize refused", "max", d.opts.MaxSessions)
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("too many client sessions (sessions.max is %d); retry later", d.opts.MaxSessions)}
	}
	s := newClientSession(d, ss)
	s.setPrincipal(identity.From(ctx)) // the initialize request's (the HTTP edge put it there)
	s.backends.Forward(header)
	d.markAll(s)
	d.sessions[ss.ID()] = s
	d.wg.Add(1)
	d.mu.Unlock()
	if d.opts.OnSession != nil {
		if err := d.opts.OnSession(ctx, s.id, true); err != nil { // outside d.mu: may do I/O
			d.mu.Lock()
			mine := d.sessions[s.id] == s // else its end was reported meanwhile (sessionEnds releases it)
			if mine {
				shrink.Delete(&d.sessions, &d.peak, s.id)
			}
			d.mu.Unlock()
			if mine {
				s.close()
				d.wg.Done()
			}
			d.metrics.Throttled.Log(d.log, slog.LevelWarn, "initialize_refused", "client session refused", "session", telemetry.SessionTag(s.id), "error", err)
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
		}
	}
	return nil // released when the handler reports its end (sessionEnds)
}

// release forgets a ended client session and closes its backend sessions.
func (d *Dispatcher) release(s *clientSession) {
	d.mu.Lock()
	if d.sessions[s.id] == s {
		shrink.Delete(&d.sessions, &d.peak, s.id)
	}
	d.mu.Unlock()
	if d.opts.OnSession != nil {
		_ = d.opts.OnSession(context.Background(), s.id, false)
	}
	s.close()
}

// session returns the registered client session of a request.
func (d *Dispatcher) session(ss *mcp.ServerSession) (*clientSession, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if s, ok := d.sessions[ss.ID()]; ok {
		return s, nil
	}
	return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "client session is not initialized or has ended"}
}
