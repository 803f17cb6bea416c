package backends

import (
	"context"
	"errors"
	"fmt"
	"github.com/vmcp/vmcp/pkg/wire"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/config"
)

// rootsListChanged is the notification a client sends when its roots
// change (2025-11-25 client/roots; 2026-07-28 has no such notification).
var rootsListChanged = wire.Notification("notifications/roots/list_changed", nil)

// markerRoot is the root a backend session's own go-sdk client adds and
// removes to make the SDK send notifications/roots/list_changed: the SDK
// has no call for it, and that client's root list is never served (the
// backend's roots/list goes to the real client, serverRequests middleware).
const markerRoot = "vmcp:roots-changed"

// rootsToggle remembers whether the marker root is in a session's client.
type rootsToggle struct {
	mu      sync.Mutex
	present bool
}

// RootsListChanged tells each open backend session of this client session
// at a Legacy revision that the client's roots changed: raw on streamable
// HTTP, through the session's own go-sdk client over stdio and SSE. The
// error names every backend that could not be told.
func (s *SessionSet) RootsListChanged(ctx context.Context) error {
	s.mu.Lock()
	open := make(map[string]*sessionEntry, len(s.open))
	for name, e := range s.open {
		select {
		case <-e.ready:
			if e.cs != nil {
				open[name] = e
			}
		default:
		}
	}
	s.mu.Unlock()
	var errs []error
	for name, e := range open {
		if err := s.rootsChanged(ctx, name, e); err != nil {
			errs = append(errs, fmt.Errorf("backend %q: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

func (s *SessionSet) rootsChanged(ctx context.Context, name string, e *sessionEntry) error {
	ir := e.cs.InitializeResult()
	if ir == nil || wire.IsModern(ir.ProtocolVersion) {
		return nil
	}
	b, err := s.m.Backend(name)
	if err != nil {
		return err
	}
	if t := b.cfg.Transport; t == config.TransportStreamableHTTP || t == "" {
		r := &RawSession{b: b, e: e, id: e.cs.ID(), version: ir.ProtocolVersion}
		return r.Notify(ctx, rootsListChanged)
	}
	e.roots.mu.Lock()
	defer e.roots.mu.Unlock()
	if e.roots.present {
		e.client.RemoveRoots(markerRoot)
	} else {
		e.client.AddRoots(&mcp.Root{URI: markerRoot, Name: "vmcp"})
	}
	e.roots.present = !e.roots.present
	return nil
}
