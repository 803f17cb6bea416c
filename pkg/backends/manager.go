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
}

// NewManager builds (but does not connect) the backends of cfgs, in config
// order, reporting inventories to agg; version is vmcp's, sent to every
// backend as clientInfo.version.
func NewManager(cfgs []config.Backend, agg *aggregator.Aggregator, log *slog.Logger, version string) *Manager {
	m := &Manager{byName: map[string]*Backend{}, agg: agg, log: log}
	for _, c := range cfgs {
		b := newBackend(c, log, version, m.publish)
		m.list = append(m.list, b)
		m.byName[c.Name] = b
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
// It returns once every backend has made its first attempt or wait elapses;
// backends that failed keep retrying with backoff.
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

// Ready reports whether at least one backend is connected.
func (m *Manager) Ready() bool {
	for _, b := range m.list {
		if b.Status().State == StateReady {
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
		if b.Status().State != StateReady {
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
