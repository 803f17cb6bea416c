package legacy

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vmcp/vmcp/pkg/shrink"
)

// sessionEnds is the event store given to the go-sdk handler: the
// configured one, plus the hook by which the dispatcher learns that a
// client session ended. The handler calls SessionClosed once, when the
// session's connection closes (DELETE, Close, shutdown), so an idle session
// needs no goroutine waiting for its end.
type sessionEnds struct {
	mcp.EventStore
	d *Dispatcher
}

// SessionClosed implements mcp.EventStore: the session is forgotten, the
// store forgets its events (and ends its GET stream), then it is released (its in-flight calls cancelled and
// its backend sessions closed) on a goroutine the dispatcher waits for,
// since the SDK calls this holding its connection's lock.
func (e sessionEnds) SessionClosed(ctx context.Context, sessionID string) error {
	e.d.mu.Lock()
	s := e.d.sessions[sessionID]
	shrink.Delete(&e.d.sessions, &e.d.peak, sessionID) // whoever removes it owns the admit's wg.Add
	e.d.mu.Unlock()
	err := e.EventStore.SessionClosed(ctx, sessionID) // after: no new GET stream reaches the store's session
	if s != nil {
		go func() {
			defer e.d.wg.Done() // the Add of admit
			e.d.release(s)
		}()
	}
	return err
}
