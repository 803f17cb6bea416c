package upstream

import (
	"fmt"

	"github.com/vmcp/vmcp/pkg/backends"
)

// sessionless is the session of a Modern client's request that needs no
// backend session of its own: routed ViaDirect, none (one self-contained
// POST to a Modern HTTP backend, backends.Backend.Stateless); routed
// ViaShared, b's control connection (a stdio or SSE backend), shared by
// the Modern clients' requests of no principal, where a request's
// progress reaches it by its token and its logs while it is alone in
// flight (backends.Backend.ControlConn), and the backend cannot ask it
// anything. Either fails with backends.ErrBackendDown while b is down.
func sessionless(b *backends.Backend, via Via) (session, error) {
	if via == ViaDirect {
		raw, ok := b.Stateless()
		if !ok {
			return nil, fmt.Errorf("backend %q: %w", b.Name(), backends.ErrBackendDown)
		}
		return httpSession{raw}, nil
	}
	conn, err := b.ControlConn()
	if err != nil {
		return nil, err
	}
	return connSession{conn}, nil
}
