// Package vmcp builds the whole virtual MCP server from a configuration:
// backends, catalogue, both dispatchers and the HTTP endpoint. cmd/vmcp is
// a thin shell over it, and tests embed it directly.
package vmcp

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-logr/logr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/audit"
	"github.com/vmcp/vmcp/pkg/auth"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/bulkgc"
	"github.com/vmcp/vmcp/pkg/capabilities"
	"github.com/vmcp/vmcp/pkg/cluster"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/dispatch/legacy"
	"github.com/vmcp/vmcp/pkg/dispatch/modern"
	"github.com/vmcp/vmcp/pkg/metatools"
	"github.com/vmcp/vmcp/pkg/mrtr"
	"github.com/vmcp/vmcp/pkg/pagination"
	"github.com/vmcp/vmcp/pkg/pin"
	authz "github.com/vmcp/vmcp/pkg/policy"
	"github.com/vmcp/vmcp/pkg/ratelimit"
	"github.com/vmcp/vmcp/pkg/status"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/upstream"
	"go.opentelemetry.io/otel/trace"
)

// Version is vmcp's release version, in serverInfo and `vmcp version`.
const Version = "0.1.0-dev"

// Options are run-time choices that are not part of the config file.
type Options struct {
	// Logger receives vmcp's logs; the zero value discards them.
	Logger logr.Logger
	// StartWait, if positive, makes New wait up to that long for the
	// backends' first connection attempts. The default (0) serves at once:
	// /readyz answers 503, listing backends still connecting, until one is
	// ready (WaitReady waits for that). Kept for tests that expect every
	// backend tried before their first request.
	StartWait time.Duration
	// BackendTiming overrides the backends' supervision timings (zero
	// fields: backends.DefaultTiming); tests shorten them.
	BackendTiming backends.Timing
	// OnBackendState, if set, is called on every backend state change
	// (synchronously from the backend's supervisor; it must not block).
	OnBackendState func(backend string, s backends.State)
	// ClusterTiming overrides the cluster's heartbeat periods and TTLs
	// (zero fields: cluster.DefaultTiming); tests shorten them.
	ClusterTiming cluster.Timing
	// ClusterRedisDialer, if set, opens this node's connections to Redis
	// (tests cut one node off Redis with it, on any topology).
	ClusterRedisDialer cluster.Dialer
	// ProgressGrace overrides how long a Legacy call's progress
	// token stays known after its response (0: the default, 2s); tests
	// shorten it.
	ProgressGrace time.Duration
	// MetricsListener is an open listener for /metrics when
	// http.metrics_listen is set (bind it before New, like the main one);
	// nil: Serve binds http.metrics_listen itself. Serve closes it.
	MetricsListener net.Listener
	// Overrides, if set, adjusts every config a reload applies before it is
	// compared with the running one (the command line's --listen).
	Overrides func(*config.Config)
	// ReloadWait bounds how long a reload waits for added backends' first
	// connection attempts before the catalogue changes (0: 10s).
	ReloadWait time.Duration
	// TracerProvider, if set, receives vmcp's spans instead of the provider
	// telemetry.tracing configures (tests pass an in-memory recorder); its
	// owner shuts it down.
	TracerProvider trace.TracerProvider
	// AuditQueue bounds the audit log's queue (0: audit.DefaultQueue) and
	// AuditOpen opens its file (nil: appending with os.OpenFile); tests
	// inject a writer that blocks or fails.
	AuditQueue int
	AuditOpen  func(path string) (io.WriteCloser, error)
	// BulkGC, if set, holds the memory limit while the catalogue loads
	// (pkg/bulkgc; vmcp serve passes one with its GC tuner); nil: the
	// process's GC settings are left alone.
	BulkGC *bulkgc.Limiter
	// RateLimitNow is the clock of in-memory rate limits (nil: time.Now);
	// tests inject one. Limits kept in Redis use Redis's clock.
	RateLimitNow func() time.Time
	// PinNow is the clock of tool pins' retention (security.pin_retention;
	// nil: time.Now); tests inject one.
	PinNow func() time.Time
	// LogNow is the clock of the throttled log lines (telemetry.Throttled:
	// refused initializes, requests on another principal's session; nil:
	// time.Now); tests inject one.
	LogNow func() time.Time
}

// Server is a running vmcp: its backends are connected and supervised until
// Close. Handler serves the MCP endpoint, /healthz and /readyz.
type Server struct {
	cfg      *config.Config
	log      *slog.Logger
	agg      *aggregator.Aggregator
	mgr      *backends.Manager
	legacy   *legacy.Dispatcher
	modern   *modern.Dispatcher
	cluster  *cluster.Cluster
	metrics  *telemetry.Metrics
	core     *upstream.Core
	auth     *auth.Authenticator // nil: no inbound authentication
	audit    *audit.Log          // nil: no audit log (audit.go)
	pins     *pin.Pins           // tool-definition pinning (pins.go)
	limits   *ratelimit.Live     // rate_limits (ratelimit.go)
	security atomic.Pointer[config.Security]
	handler  http.Handler
	stateKey []byte
	// metricsLis is Options.MetricsListener.
	metricsLis net.Listener

	tracer          trace.Tracer                // spans of client and backend requests (telemetry.go)
	tracingShutdown func(context.Context) error // flushes the provider vmcp created
	getStreams      atomic.Int64                // open GET streams at the endpoint
	exchanges       tracing.Exchanges           // this server's client requests while served

	reloadMu   sync.Mutex // one reload at a time (reload.go); guards closed
	closed     bool
	overrides  func(*config.Config)
	reloadWait time.Duration
	reloadsMu  sync.Mutex
	reloads    []status.Reload // newest first
	closing    chan struct{}   // closed by Close: Watch loops end

	op        *operator        // start time, config file, request rates (/status)
	tools     *metatools.Tools // tool search (toolsearch.go; nil: off)
	stopTools func()
	watchers  sync.WaitGroup
}

// New builds the endpoint and starts connecting the configured backends; it
// does not wait for them (see Options.StartWait). cfg must be valid
// (config.Parse applies defaults and validates).
func New(cfg *config.Config, opts Options) (*Server, error) {
	log := slog.New(logr.ToSlogHandler(opts.Logger))
	if opts.Logger.GetSink() == nil {
		log = slog.New(slog.DiscardHandler)
	}
	key, err := stateKey(cfg.MRTR.StateKey)
	if err != nil {
		return nil, err
	}
	s := &Server{cfg: cfg, log: log, stateKey: key, metrics: telemetry.New(), metricsLis: opts.MetricsListener,
		overrides: opts.Overrides, reloadWait: opts.ReloadWait, closing: make(chan struct{})}
	s.metrics.Throttled = telemetry.NewThrottled(opts.LogNow)
	if s.reloadWait <= 0 {
		s.reloadWait = defaultReloadWait
	}
	if err := s.newAuthenticator(cfg.Auth); err != nil {
		return nil, err
	}
	if err := s.startCluster(opts.ClusterTiming, opts.ClusterRedisDialer); err != nil {
		return nil, err
	}
	if err := s.openAudit(opts); err != nil {
		_ = s.cluster.Close()
		return nil, err
	}
	s.agg = aggregator.New(policy(cfg), log).WithBulkGC(opts.BulkGC)
	s.startPins(cfg, opts.PinNow)
	s.mgr = backends.NewManager(cfg.Backends, s.agg, log, Version, s.backendOptions(opts)...)
	s.mgr.Start(opts.StartWait)
	s.core = upstream.New(s.agg, s.mgr, s.metrics)
	s.core.SetLogger(log)
	s.core.SetExchanges(&s.exchanges)
	s.startLimits(cfg, opts.RateLimitNow) // ratelimit.go; live on reload
	s.op = newOperator(s.metrics.Requests)
	access := authz.New(cfg.Authorization) // nil policy: every principal sees and uses everything
	s.startToolSearch(cfg, access)
	s.newDispatchers(cfg, opts, access)
	if err := s.startTelemetry(opts); err != nil {
		s.Close()
		return nil, err
	}
	s.handler = s.routes()
	return s, nil
}

// newDispatchers builds the Legacy and Modern dispatchers over s's
// catalogue, backends and call core, with the access policy and one cursor
// codec for both revisions.
func (s *Server) newDispatchers(cfg *config.Config, opts Options, access *authz.Policy) {
	log := s.log
	s.core.SetPolicy(access)
	codec := pagination.NewCodec(s.stateKey) // one cursor codec for both revisions
	impl := &mcp.Implementation{Name: cfg.Name, Version: Version}
	s.legacy = legacy.New(s.agg, s.mgr, legacy.Options{
		Exchanges:      &s.exchanges,
		Implementation: impl,
		Instructions:   cfg.Instructions,
		PageSize:       cfg.Pagination.PageSize,
		IdleTimeout:    cfg.Sessions.IdleTimeout.D(),
		MaxSessions:    cfg.Sessions.Max,
		MaxBodyBytes:   cfg.HTTP.MaxBodyBytes,
		Capabilities:   s.legacyCapabilities,
		Codec:          codec,
		Policy:         access,
		Logger:         log,
		EventStore:     s.cluster.EventStore(),
		OnSession:      s.onSession,
		ProgressGrace:  cmp.Or(opts.ProgressGrace, config.DefaultProgressGrace),
		Core:           s.core,
		Metrics:        s.metrics,
		Observe:        s.observe,
		BulkGC:         opts.BulkGC,
	})
	s.modern = modern.New(s.agg, s.mgr, modern.Options{
		Exchanges:              &s.exchanges,
		Implementation:         impl,
		Instructions:           cfg.Instructions,
		PageSize:               cfg.Pagination.PageSize,
		MaxBodyBytes:           cfg.HTTP.MaxBodyBytes,
		Codec:                  codec,
		Policy:                 access,
		Capabilities:           s.modernCapabilities,
		Logger:                 log,
		State:                  mrtr.NewCodec(s.stateKey),
		ParkTimeout:            cfg.MRTR.ParkTimeout.D(),
		MaxParked:              cfg.MRTR.MaxParked,
		MaxParkedPerPrincipal:  cfg.MRTR.MaxParkedPerPrincipal,
		MaxListens:             cfg.Sessions.Max,
		MaxListensPerPrincipal: cfg.Sessions.MaxPerPrincipal,
		Parked:                 mrtr.NewMemory(),
		NodeID:                 s.cluster.Self().ID,
		ResumeOn:               s.resumeOn,
		Core:                   s.core,
		Metrics:                s.metrics,
	})
}

// legacyDeliverable is what vmcp delivers to Legacy client sessions.
var legacyDeliverable = capabilities.Deliverable{ListChanged: true, ResourceUpdates: true, Logging: true}

func (s *Server) legacyCapabilities() *mcp.ServerCapabilities {
	return capabilities.Compute(s.mgr.Capabilities(), legacyDeliverable)
}

// modernDeliverable is what vmcp delivers to Modern clients: list changes
// of the catalogue and updates of subscribed resources on
// subscriptions/listen streams, and backends' log messages on the stream
// of each request that set _meta logLevel (pkg/dispatch/modern stream.go).
var modernDeliverable = capabilities.Deliverable{ListChanged: true, ResourceUpdates: true, Logging: true}

func (s *Server) modernCapabilities() *mcp.ServerCapabilities {
	return capabilities.Compute(s.mgr.Capabilities(), modernDeliverable)
}

// Handler is the main listener's HTTP handler, behind the edge (Host
// guard, body bounds, Origin and CORS): the MCP endpoint at cfg.Path,
// /healthz, /readyz, /status (the operator page, see Status) and, unless
// http.metrics_listen is set, /metrics.
func (s *Server) Handler() http.Handler { return s.handler }

// Metrics are this server's Prometheus metrics (served at /metrics).
func (s *Server) Metrics() *telemetry.Metrics { return s.metrics }

// Withheld lists the backend items kept out of the catalogue, and why.
func (s *Server) Withheld() []aggregator.Withheld { return s.agg.Withheld() }

// Ready reports whether at least one backend is connected.
func (s *Server) Ready() bool { return s.mgr.Ready() }

// WaitReady waits until at least one backend is connected or ctx ends
// (returning ctx's error).
func (s *Server) WaitReady(ctx context.Context) error { return s.mgr.WaitReady(ctx) }

// WaitSettled waits until every backend has made its first connection
// attempt (each is ready or down) or ctx ends (returning ctx's error).
func (s *Server) WaitSettled(ctx context.Context) error { return s.mgr.WaitSettled(ctx) }

// SessionCount is the number of live Legacy client sessions.
func (s *Server) SessionCount() int { return s.legacy.SessionCount() }

// BackendQueueHighWater is the most messages of one backend request ever
// held between the backend's reader and the client's response in the call
// core (at most upstream.QueueCapacity: what a backend sends during a
// request streams through a bounded queue).
func (s *Server) BackendQueueHighWater() int { return s.core.QueueHighWater() }

// Close ends every client session (closing their backend sessions) and
// disconnects the backends.
func (s *Server) Close() error {
	s.reloadMu.Lock()
	if !s.closed {
		s.closed = true
		close(s.closing)
	}
	s.reloadMu.Unlock()
	s.watchers.Wait()
	s.stopToolSearch()
	s.modern.Close()
	s.legacy.Close()
	s.core.Close()        // the Modern clients' keyed backend sessions
	s.pins.Close()        // its Redis subscription, before the cluster's client closes
	_ = s.cluster.Close() // after the sessions ended: leave the cluster
	s.mgr.Close()
	s.stopTracing()
	_ = s.audit.Close() // after the streams ended: their records are written
	s.op.close()
	return nil
}

// backendOptions configure the backends: timings, the state hook, the
// server's metrics and, with inbound authentication, its issuer (whose
// token endpoint backends' auth use by default).
func (s *Server) backendOptions(opts Options) []backends.Option {
	out := []backends.Option{backends.WithTiming(opts.BackendTiming), backends.WithStateHook(opts.OnBackendState), backends.WithMetrics(s.metrics),
		backends.WithBulkGC(opts.BulkGC)}
	if s.cfg.Auth != nil {
		out = append(out, backends.WithIssuer(s.cfg.Auth.Issuer))
	}
	return out
}

func (s *Server) readyz(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	ready := s.mgr.Ready() && s.cluster.Check() == nil
	if !ready {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(map[string]any{"ready": ready, "backends": s.mgr.Status(), "cluster": s.cluster.Status()})
}

func policy(cfg *config.Config) aggregator.Policy {
	p := aggregator.Policy{
		Strategy:     cfg.Aggregation.ConflictResolution,
		PrefixFormat: cfg.Aggregation.PrefixFormat,
		Priority:     cfg.Aggregation.Priority,
		Overrides:    cfg.Aggregation.Overrides,
	}
	for _, b := range cfg.Backends {
		p.Order = append(p.Order, b.Name)
	}
	if cfg.ToolSearch.Enabled {
		p.Own = metatools.Own(cfg.ToolSearch.List == config.ToolListSearchOnly, cfg.Authorization != nil)
	}
	return p
}

// stateKey is the HMAC key for cursors and requestState: the configured
// one, or 32 random bytes (then tokens do not survive a restart).
func stateKey(configured string) ([]byte, error) {
	if configured != "" {
		return []byte(configured), nil
	}
	k := make([]byte, 32)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("generating state key: %w", err)
	}
	return k, nil
}
