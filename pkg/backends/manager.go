package backends

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/bulkgc"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/telemetry"
)

// Manager owns every configured Backend and its supervisor goroutine, and
// publishes their inventories to the aggregator. Apply changes the set of
// backends while it runs (reload.go).
type Manager struct {
	agg     *aggregator.Aggregator
	log     *slog.Logger
	version string
	opts    managerOptions

	mu     sync.RWMutex // guards list, byName and the handlers below
	list   []*Backend
	byName map[string]*Backend
	// onUpdated and onUndeliverable are the handlers set on every backend,
	// kept for the ones Apply adds.
	onUpdated       *func(backend, uri string)
	onUndeliverable *func(method, backend string, err error)

	pubMu   sync.Mutex // serializes publishing with Apply's swap (reload.go)
	applyMu sync.Mutex // one Apply at a time

	ctx    context.Context // the supervisors' parent (Start)
	cancel context.CancelFunc
	wg     sync.WaitGroup // supervisors and drains

	stateMu sync.Mutex
	changed chan struct{} // closed and replaced on every backend state change

	forward      atomic.Pointer[[]string] // every backend's forward_headers, canonical (ForwardHeaders)
	perPrincipal atomic.Bool              // some backend is per-principal (perprincipal.go)
	discMu       sync.Mutex
	disc         map[string]*discovery // Modern principals' discoveries, by principal key
}

// Option configures a Manager (NewManager).
type Option func(*managerOptions)

type managerOptions struct {
	metrics *telemetry.Metrics
	timing  Timing
	onState func(name string, s State)

	issuer string          // WithIssuer
	ids    *ids            // the Manager's request numbering, shared by its backends
	bulk   *bulkgc.Limiter // WithBulkGC
}

// WithMetrics makes the backends count into the server's metrics m (GET
// stream reconnects and abandons, skipped stdio lines; default: metrics
// of their own).
func WithMetrics(m *telemetry.Metrics) Option { return func(o *managerOptions) { o.metrics = m } }

// WithBulkGC makes the backends' list walks bulk phases of l (default:
// none).
func WithBulkGC(l *bulkgc.Limiter) Option { return func(o *managerOptions) { o.bulk = l } }

// WithTiming sets the supervision timings (zero fields: DefaultTiming).
func WithTiming(t Timing) Option { return func(o *managerOptions) { o.timing = t } }

// WithStateHook calls f(backend, state) on every change of a backend's
// state (connecting, ready, down), synchronously from its supervisor; f
// must not block.
func WithStateHook(f func(backend string, s State)) Option {
	return func(o *managerOptions) { o.onState = f }
}

// NewManager builds (but does not connect) the backends of cfgs, in config
// order, reporting inventories to agg; version is vmcp's, sent to every
// backend as clientInfo.version.
func NewManager(cfgs []config.Backend, agg *aggregator.Aggregator, log *slog.Logger, version string, opts ...Option) *Manager {
	var o managerOptions
	for _, f := range opts {
		f(&o)
	}
	if o.metrics == nil {
		o.metrics = telemetry.New()
	}
	o.ids = &ids{bulk: o.bulk, send: senderRef{ready: make(chan struct{})}}
	m := &Manager{byName: map[string]*Backend{}, agg: agg, log: log, version: version, changed: make(chan struct{}),
		disc: map[string]*discovery{}}
	hook := o.onState
	o.onState = func(name string, s State) {
		m.stateChanged()
		if hook != nil {
			hook(name, s)
		}
	}
	m.opts = o
	m.ctx, m.cancel = context.WithCancel(context.Background())
	for _, c := range cfgs {
		b := m.newBackend(c)
		m.list = append(m.list, b)
		m.byName[c.Name] = b
	}
	m.setForwarding(cfgs, m.list)
	return m
}

// newBackend builds (but does not start) the backend of c, publishing
// through m.
func (m *Manager) newBackend(c config.Backend) *Backend {
	b := newBackend(c, m.log, m.version, nil, m.opts)
	b.sink = func(inv aggregator.Inventory, present bool) { m.publish(b, inv, present) }
	m.mu.RLock()
	defer m.mu.RUnlock()
	if m.onUpdated != nil {
		b.onUpdated.Store(m.onUpdated)
	}
	if m.onUndeliverable != nil {
		b.onUndeliverable.Store(m.onUndeliverable)
	}
	return b
}

// stateChanged wakes every await.
func (m *Manager) stateChanged() {
	m.stateMu.Lock()
	close(m.changed)
	m.changed = make(chan struct{})
	m.stateMu.Unlock()
}

// backends is a snapshot of the current backends, in config order.
func (m *Manager) backends() []*Backend {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Clone(m.list)
}

// publish sends b's inventory (present) or its removal to the aggregator,
// unless Apply holds b's publications (a backend being added) or retired
// it (a backend removed or replaced).
func (m *Manager) publish(b *Backend, inv aggregator.Inventory, present bool) {
	m.pubMu.Lock()
	defer m.pubMu.Unlock()
	switch g := &b.gate; {
	case g.retired:
		return
	case g.held:
		g.pending, g.present, g.set = inv, present, true
		return
	}
	if present {
		m.agg.Update(inv)
	} else {
		m.agg.Remove(inv.Backend)
	}
}

// Start connects all backends in parallel and supervises them until Close.
// With wait > 0 it returns once every backend has made its first attempt or
// wait elapses; with wait <= 0 it returns at once. Backends that failed keep
// retrying with backoff.
func (m *Manager) Start(wait time.Duration) {
	var first sync.WaitGroup
	for _, b := range m.backends() {
		first.Add(1)
		m.startBackend(b, first.Done)
	}
	if !waitFor(&first, wait) {
		m.log.Warn("backends still connecting after start wait", "wait", wait)
	}
}

// startBackend starts b's supervisor (stopped by b.stop or Close);
// firstDone runs after its first connection attempt.
func (m *Manager) startBackend(b *Backend, firstDone func()) {
	ctx, cancel := context.WithCancel(m.ctx)
	b.stop = cancel
	m.wg.Add(1)
	go func() {
		defer m.wg.Done()
		b.supervise(ctx, firstDone)
	}()
}

// waitFor waits up to wait for wg (wait <= 0: not at all), reporting
// whether it is done.
func waitFor(wg *sync.WaitGroup, wait time.Duration) bool {
	if wait <= 0 {
		return true
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }() // ends with the first attempts, each bounded
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
		return true
	case <-t.C:
		return false
	}
}

// WaitReady waits until at least one backend is ready (Ready) or ctx ends,
// returning ctx's error then.
func (m *Manager) WaitReady(ctx context.Context) error { return m.await(ctx, m.Ready) }

// WaitSettled waits until no backend is still connecting for the first
// time (each is ready or down) or ctx ends, returning ctx's error then.
func (m *Manager) WaitSettled(ctx context.Context) error {
	return m.await(ctx, func() bool {
		for _, b := range m.backends() {
			if b.Status().State == StateConnecting {
				return false
			}
		}
		return true
	})
}

// await waits until cond holds, re-checking it on every state change.
func (m *Manager) await(ctx context.Context, cond func() bool) error {
	for {
		m.stateMu.Lock()
		ch := m.changed
		m.stateMu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// Close stops every supervisor and closes the control connections.
func (m *Manager) Close() {
	m.cancel()
	m.wg.Wait()
}

// Backend returns the named backend, or an error wrapping ErrUnknownBackend.
func (m *Manager) Backend(name string) (*Backend, error) {
	m.mu.RLock()
	b, ok := m.byName[name]
	m.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("backend %q: %w", name, ErrUnknownBackend)
	}
	return b, nil
}

// Backends returns all backends in config order (a snapshot).
func (m *Manager) Backends() []*Backend { return m.backends() }

// Status lists every backend's state in config order (for /readyz).
func (m *Manager) Status() []Status {
	list := m.backends()
	out := make([]Status, len(list))
	for i, b := range list {
		out[i] = b.Status()
	}
	return out
}

// Ready reports whether at least one backend is connected or
// per-principal.
func (m *Manager) Ready() bool {
	for _, b := range m.backends() {
		if st := b.Status().State; st == StateReady || st == StatePerPrincipal {
			return true
		}
	}
	return false
}

// Unavailable names the backends that are not ready, in config order, as
// ", unavailable backends: a, b" (empty when all are ready): appended to an
// unknown-name error so a client can tell an outage from a typo.
func (m *Manager) Unavailable() string {
	var down []string
	for _, b := range m.backends() {
		if st := b.Status().State; st != StateReady && st != StatePerPrincipal {
			down = append(down, b.Name())
		}
	}
	if len(down) == 0 {
		return ""
	}
	return "; unavailable backends: " + strings.Join(down, ", ")
}

// Capabilities returns the capabilities of every ready backend, in config
// order (input to capabilities.Compute).
func (m *Manager) Capabilities() []*mcp.ServerCapabilities {
	var out []*mcp.ServerCapabilities
	for _, b := range m.backends() {
		if c := b.Capabilities(); c != nil {
			out = append(out, c)
		}
	}
	return out
}
