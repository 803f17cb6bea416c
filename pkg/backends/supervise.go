package backends

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
)

// Supervision timings.
const (
	minBackoff     = 100 * time.Millisecond
	maxBackoff     = 30 * time.Second
	healthInterval = 5 * time.Second
)

// supervise owns the control connection: connect, list, serve refreshes and
// health checks until the connection fails, then reconnect with backoff.
// It returns when ctx ends, closing the control connection.
func (b *Backend) supervise(ctx context.Context, firstDone func()) {
	backoff := minBackoff
	for ctx.Err() == nil {
		cs, err := b.connectControl(ctx)
		if firstDone != nil {
			firstDone()
			firstDone = nil
		}
		if err != nil {
			b.setState(StateDown, err)
			if !sleep(ctx, backoff) {
				return
			}
			backoff = min(backoff*2, maxBackoff)
			continue
		}
		backoff = minBackoff
		b.watch(ctx, cs)
		b.stopEpoch()
		b.mu.Lock()
		b.control = nil
		b.mu.Unlock()
		_ = cs.Close()
		b.sink(aggregator.Inventory{Backend: b.cfg.Name}, false)
		if ctx.Err() == nil {
			b.setState(StateDown, b.Status().errOr("control connection closed"))
			sleep(ctx, minBackoff)
		}
	}
}

// connectControl connects and lists the backend, publishing its inventory.
func (b *Backend) connectControl(ctx context.Context) (*mcp.ClientSession, error) {
	cs, _, err := b.connect(ctx, SessionOptions{Client: b.controlOptions(), CacheGuard: true,
		Receiving: []mcp.Middleware{b.controlNotifications}, Tap: b.controlTap, TapLogs: true}, b.protocolVersion(), -1)
	if err != nil {
		return nil, err
	}
	if err := b.RaiseLogLevel(ctx, cs); err != nil { // Modern clients' logs (sink.go)
		b.log.Warn("logging/setLevel debug not applied to the control connection", "error", err)
	}
	b.startEpoch(ctx, cs) // listens and resource subscriptions, before listing
	inv, err := b.list(ctx, cs)
	if err != nil {
		b.stopEpoch()
		_ = cs.Close()
		return nil, err
	}
	b.mu.Lock()
	b.control, b.init, b.tools = cs, cs.InitializeResult(), len(inv.Tools)
	b.mu.Unlock()
	b.sink(inv, true)
	b.setState(StateReady, nil)
	return cs, nil
}

// watch serves refreshes and health checks until the connection fails or
// ctx ends.
func (b *Backend) watch(ctx context.Context, cs *mcp.ClientSession) {
	closed := make(chan struct{})
	go func() { _ = cs.Wait(); close(closed) }()
	tick := time.NewTicker(healthInterval)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-closed:
			return
		case <-b.refresh:
			announced := b.takeAnnounced()
			inv, err := b.list(ctx, cs)
			if err != nil {
				b.log.Warn("refresh failed", "error", err)
				b.setState(StateDown, err)
				return
			}
			b.mu.Lock()
			b.tools = len(inv.Tools)
			b.mu.Unlock()
			inv.Announced = announced
			b.sink(inv, true)
		case <-tick.C:
			if err := b.probe(ctx, cs); err != nil {
				b.setState(StateDown, err)
				return
			}
		}
	}
}

// probe checks that the backend still answers: ping on Legacy, a first
// tools/list page on Modern (which has no ping).
func (b *Backend) probe(ctx context.Context, cs *mcp.ClientSession) error {
	ctx, cancel := context.WithTimeout(ctx, b.Timeout())
	defer cancel()
	if v := cs.InitializeResult(); v != nil && v.ProtocolVersion >= "2026-07-28" {
		_, err := cs.ListTools(ctx, nil)
		return err
	}
	return cs.Ping(ctx, nil)
}

func (s Status) errOr(msg string) error {
	if s.Error != "" {
		return statusError(s.Error)
	}
	return statusError(msg)
}

type statusError string

func (e statusError) Error() string { return string(e) }

func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
