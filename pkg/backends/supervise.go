package backends

import (
	"context"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends/transport"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// Timing is how backends are supervised. Zero fields take the defaults
// (DefaultTiming); tests shorten them through WithTiming.
type Timing struct {
	// MinBackoff and MaxBackoff bound the reconnect backoff of control
	// connections, listen streams, GET streams and stdio processes
	// (doubling from MinBackoff; defaults 100ms and 30s).
	MinBackoff, MaxBackoff time.Duration
	// HealthInterval is the period of health probes (default 5s).
	HealthInterval time.Duration
	// StreamAttempts is how many failed GET stream attempts in a row end
	// vmcp's reopening of that stream (default 8; transport/getstream.go).
	StreamAttempts int
	// StreamStable is how long a GET stream must stay open, without an
	// event, to count as a success that resets the backoff (default 1s).
	StreamStable time.Duration
	// ConnStable is how long a control connection must last to reset the
	// reconnect backoff (default 1s), so a stdio process that keeps dying
	// is restarted ever more slowly.
	ConnStable time.Duration
	// RetireGrace is how long a backend a reload removed or replaced keeps
	// serving calls routed to it just before the swap (a call resolves its
	// backend, then opens its session, then enters; default 1s), before it
	// drains (reload.go).
	RetireGrace time.Duration
}

// DefaultTiming is the supervision timing used for zero Timing fields (a
// new value each call: there is no process-wide timing to change).
func DefaultTiming() Timing {
	return Timing{
		MinBackoff:     100 * time.Millisecond,
		MaxBackoff:     30 * time.Second,
		HealthInterval: 5 * time.Second,
		StreamAttempts: 8,
		StreamStable:   time.Second,
		ConnStable:     time.Second,
		RetireGrace:    time.Second,
	}
}

// withDefaults fills t's zero fields from DefaultTiming.
func (t Timing) withDefaults() Timing {
	d := DefaultTiming()
	if t.MinBackoff > 0 {
		d.MinBackoff = t.MinBackoff
	}
	if t.MaxBackoff > 0 {
		d.MaxBackoff = max(t.MaxBackoff, d.MinBackoff)
	}
	if t.HealthInterval > 0 {
		d.HealthInterval = t.HealthInterval
	}
	if t.StreamAttempts > 0 {
		d.StreamAttempts = t.StreamAttempts
	}
	if t.StreamStable > 0 {
		d.StreamStable = t.StreamStable
	}
	if t.ConnStable > 0 {
		d.ConnStable = t.ConnStable
	}
	if t.RetireGrace > 0 {
		d.RetireGrace = t.RetireGrace
	}
	return d
}

// supervise owns the control connection: connect, list, serve refreshes and
// health checks until the connection fails, then reconnect with backoff. The
// backoff doubles up to MaxBackoff after every failure, and resets only
// after a connection that lasted ConnStable. It returns when ctx ends,
// closing the control connection.
//
// A control connection the backend forgot (it restarted: 404 on its
// session, mcpmsg/renew.go) is reconnected at once, its tools still listed and
// its state unchanged (at most once per MinBackoff); only when that
// reconnect fails is the backend marked down.
func (b *Backend) supervise(ctx context.Context, firstDone func()) {
	if b.perPrincipal { // no connection of vmcp's own (perprincipal.go)
		b.setState(StatePerPrincipal, nil)
		firstDone()
		<-ctx.Done()
		return
	}
	backoff := b.timing.MinBackoff
	listed := false     // the catalogue still lists the backend's last inventory
	var quick time.Time // the last immediate reconnect (at most one per MinBackoff)
	for ctx.Err() == nil {
		cs, err := b.connectControl(ctx)
		if firstDone != nil {
			firstDone()
			firstDone = nil
		}
		if err == nil {
			up := time.Now()
			forgotten := b.watch(ctx, cs)
			b.stopEpoch()
			b.mu.Lock()
			b.control, b.controlMux = nil, nil
			b.mu.Unlock()
			_ = cs.Close()
			if ctx.Err() != nil {
				b.sink(aggregator.Inventory{Backend: b.cfg.Name}, false)
				return
			}
			if forgotten && time.Since(quick) >= b.timing.MinBackoff {
				b.log.Info("backend forgot the control connection's session (restarted?): reconnecting at once")
				quick, listed = time.Now(), true
				continue
			}
			listed = true
			err = b.Status().errOr("control connection closed")
			if time.Since(up) >= b.timing.ConnStable {
				backoff = b.timing.MinBackoff
			}
		}
		if listed {
			b.sink(aggregator.Inventory{Backend: b.cfg.Name}, false)
			listed = false
		}
		b.setState(StateDown, err)
		if !sleep(ctx, backoff) {
			return
		}
		backoff = min(backoff*2, b.timing.MaxBackoff)
	}
}

// connectControl connects and lists the backend, publishing its inventory.
func (b *Backend) connectControl(ctx context.Context) (*mcp.ClientSession, error) {
	cctx := transport.WithControl(ctx) // its GET stream refreshes after a gap
	receiving := []mcp.Middleware{b.controlNotifications, b.refuseUnattributable}
	var mux *connMux
	cs, _, err := b.connect(cctx, SessionOptions{Client: b.controlOptions(), CacheGuard: true,
		Receiving: receiving, Tap: b.controlTap, TapLogs: true, onConn: func(m *connMux) { mux = m }}, b.ProtocolVersion(), -1)
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
	b.control, b.controlMux, b.init, b.tools = cs, mux, cs.InitializeResult(), len(inv.Tools)
	b.mu.Unlock()
	b.noLegacy.Store(false) // perhaps another server now (revision.go)
	b.listed(inv, nil, time.Now())
	b.sink(inv, true)
	b.setState(StateReady, nil)
	return cs, nil
}

// watch serves refreshes and health checks until the connection fails or
// ctx ends; forgotten reports a connection whose session the backend
// forgot (mcpmsg/renew.go).
func (b *Backend) watch(ctx context.Context, cs *mcp.ClientSession) (forgotten bool) {
	closed := make(chan struct{})
	var waitErr error
	go func() { waitErr = cs.Wait(); close(closed) }()
	defer func() {
		if !forgotten {
			select {
			case <-closed:
				forgotten = mcpmsg.SessionForgotten(waitErr)
			default:
			}
		}
	}()
	tick := time.NewTicker(b.timing.HealthInterval)
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
				if mcpmsg.SessionForgotten(err) {
					return true
				}
				b.log.Warn("refresh failed", "error", err)
				b.setState(StateDown, err)
				return false
			}
			b.mu.Lock()
			b.tools = len(inv.Tools)
			b.mu.Unlock()
			inv.Announced = b.listed(inv, announced, time.Now())
			b.sink(inv, true)
		case <-tick.C:
			if err := b.probe(ctx, cs); err != nil {
				if mcpmsg.SessionForgotten(err) {
					return true
				}
				b.setState(StateDown, err)
				return false
			}
		}
	}
}

// probe checks that the backend still answers: ping on Legacy; on Modern
// (which has no ping) server/discover sent directly (streamable HTTP),
// else a first tools/list page.
func (b *Backend) probe(ctx context.Context, cs *mcp.ClientSession) error {
	ctx, cancel := context.WithTimeout(ctx, b.Timeout())
	defer cancel()
	if v := cs.InitializeResult(); v != nil && wire.IsModern(v.ProtocolVersion) {
		if version, ok := b.DirectVersion(); ok {
			// server/discover: a first tools/list page of a backend with
			// thousands of tools costs vmcp megabytes per probe.
			p := &mcp.DiscoverParams{}
			p.SetMeta(map[string]any{mcp.MetaKeyClientCapabilities: map[string]any{}})
			_, err := b.Direct(ctx, version, DirectRequest{Method: "server/discover", Params: p})
			return err
		}
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
