package backends

import (
	"fmt"

	"github.com/vmcp/vmcp/pkg/wire"
)

// ControlRaw is b's control connection over streamable HTTP as a
// RawSession, for the requests vmcp sends on it for itself through the
// one sender (the shared resource subscriptions: resources.go): its
// Mcp-Session-Id and revision. It fails with ErrBackendDown while the
// backend is down, per-principal or not reached over streamable HTTP.
func (b *Backend) ControlRaw() (*RawSession, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if !b.isHTTP() || b.state != StateReady || b.control == nil || b.init == nil {
		return nil, fmt.Errorf("backend %q: %w", b.cfg.Name, ErrBackendDown)
	}
	v := b.init.ProtocolVersion
	return &RawSession{b: b, id: b.control.ID(), version: v, modern: wire.IsModern(v)}, nil
}
