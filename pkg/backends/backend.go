// Package backends connects vmcp to its MCP servers over streamable HTTP,
// legacy SSE or stdio with the go-sdk client. Each Backend keeps one control
// connection that feeds the catalogue and serves stateless (Modern) clients,
// and opens per-client-session backend sessions on demand (pkg/backends/session).
// How bytes reach a backend (HTTP client stack, stdio process, SSE) is
// backends/transport; what a message means is wire/mcpmsg.
package backends

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends/transport"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/outbound"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// Sentinel errors; wrapped with the backend's name.
var (
	ErrBackendDown    = errors.New("backend unavailable")
	ErrUnknownBackend = errors.New("unknown backend")
	ErrSessionClosed  = errors.New("client session closed")
	// ErrProcessLimit: a stdio backend already runs max_processes processes
	// for client sessions.
	ErrProcessLimit = errors.New("stdio process limit reached")
)

// State is a backend's connection state as reported by /readyz.
type State string

// Backend states.
const (
	StateConnecting State = "connecting"
	StateReady      State = "ready"
	StateDown       State = "down"
	// StatePerPrincipal: the backend takes each user's credential
	// (perprincipal.go); vmcp has no connection of its own to it and
	// discovers it per principal. It counts as available.
	StatePerPrincipal State = "per-principal"
)

// Backend is one configured MCP server.
type Backend struct {
	cfg  config.Backend
	http *http.Client
	log  *slog.Logger
	sink func(aggregator.Inventory, bool) // inventory update (true) or removal (false)

	ids     *ids                       // the Manager's request numbering
	timing  Timing                     // supervision timings, defaults filled
	metrics *telemetry.Metrics         // the server's metrics
	onState func(name string, s State) // state-transition hook (may be nil)

	refresh chan struct{} // list_changed on the control connection (cap 1, coalescing)
	ann     announcements // list_changed received and lists seen (announce.go; under mu)

	subs      resourceSubs                              // upstream resource subscriptions (resources.go)
	onUpdated atomic.Pointer[func(backend, uri string)] // resources/updated handler (Manager.OnResourceUpdated)
	// onUndeliverable handles messages that reach no call (sink.go).
	onUndeliverable atomic.Pointer[func(method, backend string, err error)]

	procs atomic.Int64 // live stdio processes of client sessions (max_processes)
	// noLegacy: this Modern backend refused a Legacy session, or (HTTP)
	// answered its initialize without one; reset by each new control
	// connection (revision.go).
	noLegacy atomic.Bool

	perPrincipal bool             // discovered and used per principal only (perprincipal.go)
	out          *outbound.Source // its own tokens (outbound.go; nil: none)

	stop     context.CancelFunc // stops the supervisor (Manager.startBackend)
	gate     gate               // publishing during a reload (reload.go; Manager.pubMu)
	flight   flight             // requests in flight (Enter)
	sessions sessions           // backend sessions opened by open, closed when retired

	mu         sync.Mutex
	state      State
	lastErr    error
	hist       History // state changes and failures, for /status
	control    *mcp.ClientSession
	controlMux *connMux // shares a stdio or SSE control connection (connmux.go)
	init       *mcp.InitializeResult
	tools      int
	hints      map[string]mcpmsg.CacheHint // list method -> cache hint of the last walk (mcpmsg/cacheguard.go)
	info       *mcp.Implementation         // vmcp's clientInfo, as sent to this backend
}

func newBackend(cfg config.Backend, log *slog.Logger, version string, sink func(aggregator.Inventory, bool), o managerOptions) *Backend {
	b := &Backend{
		cfg:     cfg,
		info:    &mcp.Implementation{Name: "vmcp", Version: version},
		log:     log.With("backend", cfg.Name),
		sink:    sink,
		ids:     o.ids,
		timing:  o.timing.withDefaults(),
		metrics: o.metrics,
		onState: o.onState,
		refresh: make(chan struct{}, 1),
		state:   StateConnecting,
	}
	b.out = newOutbound(cfg, o)
	b.perPrincipal = b.out != nil && b.out.PerPrincipal()
	b.http = transport.NewHTTPClient(cfg, b.out, transport.Steady{Name: cfg.Name, Log: b.log, Metrics: b.metrics,
		MinBackoff: b.timing.MinBackoff, MaxBackoff: b.timing.MaxBackoff, Stable: b.timing.StreamStable,
		Attempts: b.timing.StreamAttempts, Refresh: b.requestRefresh})
	return b
}

// Name is the backend's configured name.
func (b *Backend) Name() string { return b.cfg.Name }

// Transport is the backend's configured transport (streamable-http, sse,
// stdio).
func (b *Backend) Transport() string { return b.cfg.Transport }

// Timeout is the per-request bound for calls to this backend.
func (b *Backend) Timeout() time.Duration {
	if d := b.cfg.Timeout.D(); d > 0 {
		return d
	}
	return config.DefaultBackendTimeout
}

// Status reports the backend's current state. A backend that is not ready
// lists no tools and no protocol version: its tools are out of the
// catalogue, and the version is of a connection that is gone.
func (b *Backend) Status() Status {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := Status{Name: b.cfg.Name, State: b.state, History: b.hist, Outbound: b.OutboundStats()}
	if b.lastErr != nil {
		s.Error = b.lastErr.Error()
	}
	if b.state != StateReady {
		return s
	}
	s.Tools = b.tools
	if b.init != nil {
		s.ProtocolVersion = b.init.ProtocolVersion
	}
	return s
}

// Capabilities returns the backend's advertised capabilities, or nil while
// it is not ready.
func (b *Backend) Capabilities() *mcp.ServerCapabilities {
	b.mu.Lock()
	defer b.mu.Unlock()
	if (b.state != StateReady && b.state != StatePerPrincipal) || b.init == nil {
		return nil
	}
	return b.init.Capabilities
}

// Shared returns the control connection, shared by all stateless (Modern)
// client requests. It fails with ErrBackendDown while the backend is down.
func (b *Backend) Shared() (*mcp.ClientSession, error) {
	if b.perPrincipal {
		return nil, fmt.Errorf("backend %q: %w: it takes each user's own token (auth.type: token_exchange), so vmcp has no connection of its own to it", b.cfg.Name, ErrBackendDown)
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.state != StateReady || b.control == nil {
		return nil, fmt.Errorf("backend %q: %w", b.cfg.Name, ErrBackendDown)
	}
	return b.control, nil
}

// ProtocolVersion is the revision negotiated by the control connection
// (or a per-principal backend's first session; "" before the first
// connect); sessions reuse it to skip renegotiation.
func (b *Backend) ProtocolVersion() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.init == nil {
		return ""
	}
	return b.init.ProtocolVersion
}

// Open connects a new backend session with the given options (the client's
// capabilities, server-to-client handlers and tap). The caller closes it.
func (b *Backend) Open(ctx context.Context, opts SessionOptions) (*mcp.ClientSession, error) {
	cs, _, err := b.open(ctx, opts)
	return cs, err
}

// open is Open, also returning the session's own go-sdk client, at the
// revision revision.go picks for opts. A stdio backend's process count is
// bounded by max_processes (ErrProcessLimit). The session is tracked, so
// a reload that removes the backend closes it (reload.go).
func (b *Backend) open(ctx context.Context, opts SessionOptions) (*mcp.ClientSession, *mcp.Client, error) {
	cs, client, err := b.openUntracked(ctx, opts)
	if err == nil && !b.track(cs) {
		return nil, nil, fmt.Errorf("backend %q: %w (removed by a reload)", b.cfg.Name, ErrBackendDown)
	}
	return cs, client, err
}

// openUntracked is open without the tracking.
func (b *Backend) openUntracked(ctx context.Context, opts SessionOptions) (*mcp.ClientSession, *mcp.Client, error) {
	if b.perPrincipal {
		return b.openPerPrincipal(ctx, opts)
	}
	if b.ProtocolVersion() == "" {
		if _, err := b.Shared(); err != nil {
			return nil, nil, err
		}
	}
	return b.dialSession(ctx, opts, func(ctx context.Context, version string) (*mcp.ClientSession, *mcp.Client, error) {
		return b.dialCounted(ctx, opts, version)
	})
}

// dialCounted connects one session at version; on stdio with
// max_processes, the process counts against the limit until it exits.
func (b *Backend) dialCounted(ctx context.Context, opts SessionOptions, version string) (*mcp.ClientSession, *mcp.Client, error) {
	limit := int64(b.cfg.MaxProcesses)
	if b.cfg.Transport != config.TransportStdio || limit <= 0 {
		return b.connect(ctx, opts, version, 2)
	}
	if n := b.procs.Add(1); n > limit {
		b.procs.Add(-1)
		return nil, nil, fmt.Errorf("backend %q: %w: %d processes already run for client sessions (max_processes: %d)",
			b.cfg.Name, ErrProcessLimit, limit, limit)
	}
	release := sync.OnceFunc(func() { b.procs.Add(-1) }) // at process exit, or a failed connect
	cs, client, err := b.connectWith(ctx, opts, version, 2, release)
	if err != nil {
		release()
	}
	return cs, client, err
}

// connect dials one backend connection. retries bounds the SDK's
// reconnection of a broken HTTP stream (-1: none, so a control connection
// notices a dead backend at once).
func (b *Backend) connect(ctx context.Context, opts SessionOptions, version string, retries int) (*mcp.ClientSession, *mcp.Client, error) {
	return b.connectWith(ctx, opts, version, retries, nil)
}

// connectWith is connect; on stdio, exited (if set) runs once the process
// has been ended (transport/stdio.go).
func (b *Backend) connectWith(ctx context.Context, opts SessionOptions, version string, retries int, exited func()) (*mcp.ClientSession, *mcp.Client, error) {
	hc := b.sessionHTTP(ctx, opts)
	t, err := transport.NewTransport(b.cfg, hc, retries, b.log, b.metrics.StdioSkippedLines.WithLabelValues(b.cfg.Name), exited)
	if err != nil {
		return nil, nil, err
	}
	if _, isHTTP := t.(*mcp.StreamableClientTransport); !isHTTP { // a stdio or SSE connection
		t = &tapTransportConn{Transport: t, tap: opts.Tap, logs: opts.TapLogs, onConn: opts.onConn}
		if opts.CacheGuard {
			t = transport.GuardConn(t)
		}
		t = transport.CheckConn(t, b.cfg.Name) // null results (transport/resultcheck.go)
	}
	ctx, cancel := context.WithTimeout(ctx, b.Timeout())
	defer cancel()
	client := mcp.NewClient(b.info, opts.Client)
	client.AddReceivingMiddleware(opts.Receiving...)
	client.AddSendingMiddleware(append([]mcp.Middleware{negotiate()}, opts.Sending...)...)
	cs, err := client.Connect(ctx, t, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return nil, nil, fmt.Errorf("backend %q: connect: %w", b.cfg.Name, err)
	}
	return cs, client, nil
}

func (b *Backend) setState(s State, err error) {
	b.mu.Lock()
	changed := b.state != s
	b.hist.record(s, changed, err, time.Now())
	b.state, b.lastErr = s, err
	b.mu.Unlock()
	if changed {
		if b.onState != nil {
			b.onState(b.cfg.Name, s)
		}
		if err != nil {
			b.log.Warn("backend state", "state", s, "error", err)
		} else {
			b.log.Info("backend state", "state", s)
		}
	}
}

func (b *Backend) requestRefresh() {
	select {
	case b.refresh <- struct{}{}:
	default: // a refresh is already pending; coalesced
	}
}

// controlOptions configure the control connection: the client
// capabilities vmcp can bridge (bridgedCapabilities), no automatic MRTR,
// and the list_changed handlers only off HTTP (they make the go-sdk open
// its unsupervised listen on a Modern backend; over HTTP vmcp supervises
// its own, listen.go). Notifications themselves are handled by
// controlNotifications.
func (b *Backend) controlOptions() *mcp.ClientOptions {
	opts := &mcp.ClientOptions{
		Capabilities:   bridgedCapabilities(),
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}
	if !b.isHTTP() {
		opts.ToolListChangedHandler = func(context.Context, *mcp.ToolListChangedRequest) {}
		opts.PromptListChangedHandler = func(context.Context, *mcp.PromptListChangedRequest) {}
		opts.ResourceListChangedHandler = func(context.Context, *mcp.ResourceListChangedRequest) {}
	}
	return opts
}

// bridgedCapabilities are the client capabilities the control connection
// declares: those vmcp can bridge to a client that has them (elicitation
// in form and URL mode, sampling, roots). Servers that register tools only
// for clients declaring a capability (server-everything's
// trigger-elicitation-request) list them to vmcp. Each call still carries
// its client's own capabilities (its own backend session, or _meta on
// Modern), and the control connection refuses what it cannot attribute
// (refuseUnattributable).
func bridgedCapabilities() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{
		RootsV2:     &mcp.RootCapabilities{},
		Sampling:    &mcp.SamplingCapabilities{},
		Elicitation: &mcp.ElicitationCapabilities{Form: &mcp.FormElicitationCapabilities{}, URL: &mcp.URLElicitationCapabilities{}},
	}
}

// controlNotifications is receiving middleware on the control connection:
// list_changed requests a refresh, resources/updated goes to the manager.
func (b *Backend) controlNotifications(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "notifications/tools/list_changed", "notifications/prompts/list_changed", "notifications/resources/list_changed":
			b.announceChange(method)
		case "notifications/resources/updated":
			if p, ok := req.GetParams().(*mcp.ResourceUpdatedNotificationParams); ok && p != nil {
				b.resourceUpdated(p.URI)
			}
		}
		return next(ctx, method, req)
	}
}

// HTTP reports whether b is reached over streamable HTTP.
func (b *Backend) HTTP() bool { return b.isHTTP() }

// Modern reports whether b's control connection negotiated a Modern
// revision (2026-07-28 or later); false before it first connected.
func (b *Backend) Modern() bool { return wire.IsModern(b.ProtocolVersion()) }
