package backends

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/telemetry"
)

// Manager owns every configured Backend and its supervisor goroutine, and
// publishes their inventories to the aggregator.
type Manager struct {
	list   []*Backend
	byName map[string]*Backend
	agg    *aggregator.Aggregator
	log    *slog.Logger

	cancel context.CancelFunc
	wg     sync.WaitGroup

	stateMu sync.Mutex
	changed chan struct{} // closed and replaced on every backend state change

	forward      []string // every backend's forward_headers, canonical (SessionSet.Forward)
	perPrincipal bool     // some backend is per-principal (perprincipal.go)
	discMu       sync.Mutex
	disc         map[string]*discovery // Modern principals' discoveries, by principal key
}

// Option configures a Manager (NewManager).
type Option func(*managerOptions)

type managerOptions struct {
	metrics *telemetry.Metrics
	timing  Timing
	onState func(name string, s State)

	perPrincipal bool // WithPerPrincipal
}

// WithMetrics makes the backends count into the server's metrics m (GET
// stream reconnects and abandons, skipped stdio lines; default: metrics
// of their own).
func WithMetrics(m *telemetry.Metrics) Option { return func(o *managerOptions) { o.metrics = m } }

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
	m := &Manager{byName: map[string]*Backend{}, agg: agg, log: log, changed: make(chan struct{}),
		forward: forwardNames(cfgs), disc: map[string]*discovery{}}
	hook := o.onState
	o.onState = func(name string, s State) {
		m.stateMu.Lock()
		close(m.changed)
		m.changed = make(chan struct{})
		m.stateMu.Unlock()
		if hook != nil {
			hook(name, s)
		}
	}
	for _, c := range cfgs {
		b := newBackend(c, log, version, m.publish, o)
		m.list = append(m.list, b)
		m.byName[c.Name] = b
		m.perPrincipal = m.perPrincipal || b.perPrincipal
	}
	return m
}

func (m *Manager) publish(inv aggregator.Inventory, present bool) {
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
	ctx, cancel := context.WithCancel(context.Background())
	m.cancel = cancel
	var first sync.WaitGroup
	for _, b := range m.list {
		first.Add(1)
		m.wg.Add(1)
		go func() {
			defer m.wg.Done()
			b.supervise(ctx, first.Done)
		}()
	}
	if wait <= 0 {
		return
	}
	done := make(chan struct{})
	go func() { first.Wait(); close(done) }()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		m.log.Warn("backends still connecting after start wait", "wait", wait)
	}
}

// WaitReady waits until at least one backend is ready (Ready) or ctx ends,
// returning ctx's error then.
func (m *Manager) WaitReady(ctx context.Context) error { return m.await(ctx, m.Ready) }

// WaitSettled waits until no backend is still connecting for the first
// time (each is ready or down) or ctx ends, returning ctx's error then.
func (m *Manager) WaitSettled(ctx context.Context) error {
	return m.await(ctx, func() bool {
		for _, b := range m.list {
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
	if m.cancel != nil {
		m.cancel()
	}
	m.wg.Wait()
}

// Backend returns the named backend, or an error wrapping ErrUnknownBackend.
func (m *Manager) Backend(name string) (*Backend, error) {
	b, ok := m.byName[name]
	if !ok {
		return nil, fmt.Errorf("backend %q: %w", name, ErrUnknownBackend)
	}
	return b, nil
}

// Backends returns all backends in config order.
func (m *Manager) Backends() []*Backend { return m.list }

// Status lists every backend's state in config order (for /readyz).
func (m *Manager) Status() []Status {
	out := make([]Status, len(m.list))
	for i, b := range m.list {
		out[i] = b.Status()
	}
	return out
}

// Ready reports whether at least one backend is connected or
// per-principal.
func (m *Manager) Ready() bool {
	for _, b := range m.list {
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
	for _, b := range m.list {
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
	for _, b := range m.list {
		if c := b.Capabilities(); c != nil {
			out = append(out, c)
		}
	}
	return out
}
