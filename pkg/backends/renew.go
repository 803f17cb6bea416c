package backends

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A backend that restarted forgets its sessions: a request on one gets
// 404 (mcp.ErrSessionMissing) and the go-sdk fails that connection. A call
// that meets it on the control connection waits for the next one
// (Renewed) and is sent once more there, as a Legacy client's relayed call
// is on a new backend session; the supervisor reconnects a forgotten
// control connection at once (supervise), without marking the backend
// down or removing its tools.

// renewal is a Backend's record of its control connections (under mu).
type renewal struct {
	forgotten *mcp.ClientSession // the last control connection a call found forgotten
	changed   chan struct{}      // closed (and replaced) when a new control connection is set
}

// SessionForgotten reports whether err says the backend no longer knows
// the session the request was sent on (HTTP 404).
func SessionForgotten(err error) bool {
	return errors.Is(err, mcp.ErrSessionMissing) || errors.Is(err, ErrSessionExpired)
}

// controlSet announces a new control connection to Renewed. b.mu is held.
func (b *Backend) controlSet() {
	if b.renew.changed != nil {
		close(b.renew.changed)
	}
	b.renew.changed = make(chan struct{})
}

// wasForgotten reports whether cs, a control connection that failed with
// err, was forgotten by the backend.
func (b *Backend) wasForgotten(cs *mcp.ClientSession, err error) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return SessionForgotten(err) || b.renew.forgotten == cs
}

// Renewed is for a call that found the control connection old forgotten
// (SessionForgotten): it marks old so, closes it (the supervisor then
// reconnects at once) and waits, within ctx, for the next control
// connection, which it returns.
func (b *Backend) Renewed(ctx context.Context, old *mcp.ClientSession) (*mcp.ClientSession, error) {
	b.mu.Lock()
	if b.control == old {
		b.renew.forgotten = old
	}
	b.mu.Unlock()
	_ = old.Close() // ends the supervisor's watch if the go-sdk has not yet
	for {
		b.mu.Lock()
		cs, ready := b.control, b.state == StateReady
		if b.renew.changed == nil {
			b.renew.changed = make(chan struct{})
		}
		changed := b.renew.changed
		b.mu.Unlock()
		if cs != nil && cs != old && ready {
			return cs, nil
		}
		if b.Status().State == StateDown {
			return nil, fmt.Errorf("backend %q: %w", b.cfg.Name, ErrBackendDown)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, fmt.Errorf("backend %q: waiting for a new session after the backend forgot the last one: %w", b.cfg.Name, context.Cause(ctx))
		}
	}
}
