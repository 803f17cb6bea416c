package legacy

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/backends/session"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// clientSession is vmcp's state for one Legacy client session: its backend
// sessions (one per backend, opened on first use), its in-flight calls (for
// progress and server-to-client requests) and its log level.
type clientSession struct {
	id       string
	front    *mcp.ServerSession
	d        *Dispatcher
	backends *session.Set
	calls    *calls
	// relayState holds the relayed calls and server-to-client requests
	// (relay.go); idle ends the session after IdleTimeout without requests.
	relayState *relayState
	idle       *idleTimer
	marks      viewMarks // the list views it was shown (lists.go)
	// discovered is set once its principal's own backends were listed at
	// initialize: own-view changes are told from then on (ownviews.go).
	discovered atomic.Bool
	// ended is cancelled when the session is deleted or closed; it cancels
	// the session's in-flight backend calls (the SDK's session Close waits
	// for in-flight requests, so nothing else would end them).
	ended context.Context
	end   context.CancelFunc
	// listens hold its resource subscriptions on Modern backend sessions
	// (upstream.Listens), ended with it.
	listens *upstream.Listens

	mu         sync.Mutex
	owner      identity.Principal // who the session's requests speak for (setPrincipal)
	created    time.Time          // when it was initialized
	active     time.Time          // when its last POST began (setPrincipal)
	logLevel   mcp.LoggingLevel   // "" until logging/setLevel
	lastCancel time.Time          // when a backend call was last cancelled

	capsOnce sync.Once       // caps: the client's capabilities as JSON (capabilitiesRaw)
	caps     json.RawMessage // for requests relayed to Modern backends
}

// setPrincipal records the principal of one of the session's HTTP
// requests (the HTTP edge refuses another principal's requests on it, so
// it is the owner's); the go-sdk path reads it back with principal.
func (s *clientSession) setPrincipal(p identity.Principal) {
	s.mu.Lock()
	s.owner, s.active = p, time.Now()
	s.mu.Unlock()
	s.backends.Bind(p) // whose token its backend sessions carry (outbound identity)
}

// principal is who this session's requests speak for.
func (s *clientSession) principal() identity.Principal {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owner
}

// cancelFlush is how long a client session's backend sessions stay open
// after one of its backend calls was cancelled. The go-sdk client sends
// notifications/cancelled from a goroutine and refuses to once the session
// is closing (mcp/transport.go, jsonrpc2 Connection.Notify); a lost notice
// leaves a go-sdk backend's handler running, and its DELETE waits for it.
const cancelFlush = 500 * time.Millisecond

func (s *clientSession) noteCancelled() {
	s.mu.Lock()
	s.lastCancel = time.Now()
	s.mu.Unlock()
}

func newClientSession(d *Dispatcher, ss *mcp.ServerSession) *clientSession {
	s := &clientSession{id: ss.ID(), front: ss, d: d, calls: newCalls(d.opts.ProgressGrace), relayState: newRelayState()}
	s.created = time.Now()
	s.active = s.created
	s.idle = newIdleTimer(d.opts.IdleTimeout, func() {
		d.log.Info("client session idle; ending it", "session", telemetry.SessionTag(s.id), "idle_timeout", d.opts.IdleTimeout)
		_ = ss.Close()
	})
	s.ended, s.end = context.WithCancel(context.Background())
	s.listens = upstream.NewListens(s.ended)
	s.backends = session.New(d.mgr, s.sessionOptions)
	return s
}

// bound returns ctx, also cancelled when the client session ends; stop
// releases it.
func (s *clientSession) bound(ctx context.Context) (context.Context, func()) {
	ctx, cancel := context.WithCancel(ctx)
	stop := context.AfterFunc(s.ended, cancel)
	return ctx, func() { stop(); cancel() }
}

// abortSession cancels the in-flight calls of client session id, which a
// DELETE is about to end: the SDK's session Close waits for in-flight
// requests, so without this the DELETE (and the backend handler) would wait
// for the backend call to finish or time out.
func (d *Dispatcher) abortSession(id string) {
	d.mu.Lock()
	s := d.sessions[id]
	d.mu.Unlock()
	if s != nil {
		s.end()
	}
}

func (s *clientSession) close() {
	s.idle.stop()
	s.end()
	s.listens.Close()
	s.mu.Lock()
	wait := time.Duration(0)
	if !s.lastCancel.IsZero() {
		wait = cancelFlush - time.Since(s.lastCancel)
	}
	s.mu.Unlock()
	if wait > 0 { // let the cancellation notices go out first
		time.Sleep(wait)
	}
	if err := s.backends.Close(); err != nil {
		s.d.log.Warn("closing backend sessions", "session", telemetry.SessionTag(s.id), "error", err)
	}
}

// sessionOptions configure this session's backend sessions: the backend
// sees exactly the client's declared capabilities, and its server-to-client
// requests and notifications reach this client only.
func (s *clientSession) sessionOptions(b *backends.Backend) backends.SessionOptions {
	caps := &mcp.ClientCapabilities{}
	if p := s.front.InitializeParams(); p != nil && p.Capabilities != nil {
		caps = cloneCaps(p.Capabilities)
	}
	opts := &mcp.ClientOptions{Capabilities: caps, MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true}}
	opts.LoggingMessageHandler = func(ctx context.Context, r *mcp.LoggingMessageRequest) {
		if err := s.front.Log(context.Background(), r.Params); err != nil {
			s.d.undeliverable("notifications/message", s.id, b.Name(), err)
		}
	}
	opts.ResourceUpdatedHandler = func(ctx context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
		s.d.resourceUpdated(s, r.Params)
	}
	opts.ElicitationCompleteHandler = func(ctx context.Context, r *mcp.ElicitationCompleteNotificationRequest) {
		if err := s.front.NotifyElicitationComplete(context.Background(), r.Params); err != nil {
			s.d.undeliverable("notifications/elicitation/complete", s.id, b.Name(), err)
		}
	}
	receiving := []mcp.Middleware{s.serverRequests(b.Name())}
	return backends.SessionOptions{
		Client:    opts,
		Receiving: receiving,
		Tap:       func(ctx context.Context, msg *jsonrpc.Request) { s.tap(ctx, b.Name(), msg) },
		Opened:    s.initBackendSession,
		Legacy:    true, // a Legacy revision, so the backend can ask (backends/revision.go)
	}
}

// initBackendSession applies the client's log level to a new backend
// session. A backend refusing it keeps the session (its calls need no
// level): the refusal is logged at most once a second per backend.
func (s *clientSession) initBackendSession(ctx context.Context, o backends.OpenSession) error {
	s.mu.Lock()
	level := s.logLevel
	s.mu.Unlock()
	s.d.applyLevel(ctx, s.id, o, level)
	return nil
}

// applyLevel is setLevel with a failure logged at most once a second per
// backend (a client can repeat logging/setLevel at will).
func (d *Dispatcher) applyLevel(ctx context.Context, session string, o backends.OpenSession, level mcp.LoggingLevel) {
	if err := d.setLevel(ctx, o, level); err != nil {
		d.metrics.Throttled.Log(d.log, slog.LevelWarn, "setlevel:"+o.Backend.Name(), "logging/setLevel not applied to backend",
			"session", telemetry.SessionTag(session), "backend", o.Backend.Name(), "error", err)
	}
}

// setLevel sends logging/setLevel (through upstream) to a Legacy backend
// session that offers logging.
func (d *Dispatcher) setLevel(ctx context.Context, o backends.OpenSession, level mcp.LoggingLevel) error {
	if level == "" || !o.Legacy() || o.Init.Capabilities == nil || o.Init.Capabilities.Logging == nil {
		return nil
	}
	params, err := json.Marshal(&mcp.SetLoggingLevelParams{Level: level})
	if err != nil {
		return err
	}
	_, err = d.core.Request(ctx, o, "logging/setLevel", params)
	return err
}

// cloneCaps copies the client's capabilities for a backend session:
// roots/list is answered live by the client and its roots/list_changed is
// relayed (rootsListChanged), so roots are offered as the client declared.
func cloneCaps(c *mcp.ClientCapabilities) *mcp.ClientCapabilities {
	cp := *c
	return &cp
}

// rootsListChanged relays a client's notifications/roots/list_changed to
// its own backend sessions at a Legacy revision (2025-11-25 client/roots),
// through upstream; a backend that cannot be told is logged and counted.
func (d *Dispatcher) rootsListChanged(ctx context.Context, req *mcp.RootsListChangedRequest) {
	s, err := d.session(req.Session)
	if err != nil {
		d.undeliverable("notifications/roots/list_changed", req.Session.ID(), "", err)
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cancelFlush)
	defer cancel()
	for _, o := range s.backends.Open() {
		if !o.Legacy() {
			continue // Modern backends ask for roots per call
		}
		if err := d.core.Notify(ctx, o, "notifications/roots/list_changed", nil); err != nil {
			d.undeliverable("notifications/roots/list_changed", s.id, o.Backend.Name(), err)
		}
	}
}
