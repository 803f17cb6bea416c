package subscriptions

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/identity"
)

// MaxPendingUpdates bounds the resources/updated notifications queued for
// one stream; beyond it an update is dropped, logged and counted
// (vmcp_undeliverable_messages_total). Repeated updates of a URI still pending are
// coalesced and never count against it.
const MaxPendingUpdates = 256

// Notification method names delivered on listen streams.
const (
	MethodToolsListChanged     = "notifications/tools/list_changed"
	MethodPromptsListChanged   = "notifications/prompts/list_changed"
	MethodResourcesListChanged = "notifications/resources/list_changed"
	MethodResourceUpdated      = "notifications/resources/updated"
)

// Sink delivers JSON-RPC notifications on one listen stream, in call order.
// Send returns an error once the stream is gone (the client closed it, or a
// write timed out).
type Sink interface {
	Send(method string, params mcp.Params) error
}

// Stream is one open subscriptions/listen stream. ID is the listen request's
// raw JSON-RPC id, which is also its subscription id (2026-07-28
// subscriptions: every message on the stream carries it in _meta). Honored
// is fixed once Open returns.
type Stream struct {
	ID        json.RawMessage
	Honored   mcp.NotificationSubscriptions
	Principal identity.Principal // whose stream it is (OpenFor); anonymous without auth

	reg  *Registry
	uris map[Resource]bool // granted resources (under Registry.mu)
	held []Resource        // upstream references to drop (under Registry.mu)

	mu       sync.Mutex
	tools    bool // a list_changed of this kind is pending
	prompts  bool
	res      bool
	updates  []string // pending resources/updated URIs, FIFO, no duplicates
	queued   map[string]bool
	ready    chan struct{} // cap 1: something is pending
	done     chan struct{} // closed by Registry.Close (graceful end)
	doneOnce sync.Once
}

func newStream(r *Registry, id json.RawMessage) *Stream {
	return &Stream{ID: id, reg: r, uris: map[Resource]bool{}, queued: map[string]bool{},
		ready: make(chan struct{}, 1), done: make(chan struct{})}
}

// Send delivers one notification on sink after setting
// _meta[mcp.MetaKeySubscriptionID] on params to the stream's ID, so params
// must not be shared with another stream. params may be nil.
func (s *Stream) Send(sink Sink, method string, params mcp.Params) error {
	if params != nil {
		m := params.GetMeta()
		if m == nil {
			m = map[string]any{}
		}
		m[mcp.MetaKeySubscriptionID] = s.ID
		params.SetMeta(m)
	}
	return sink.Send(method, params)
}

func (s *Stream) end() { s.doneOnce.Do(func() { close(s.done) }) }

// Serve writes the stream's notifications to sink as they are queued, on
// the caller's goroutine, until ctx ends (the client closed the stream:
// cancellation), the registry ends the stream (graceful, true) or a write
// fails (the error).
func (s *Stream) Serve(ctx context.Context, sink Sink) (graceful bool, err error) {
	for {
		select {
		case <-ctx.Done():
			return false, nil
		case <-s.done:
			return true, nil
		case <-s.ready:
			for _, n := range s.take() {
				if err := s.Send(sink, n.method, n.params); err != nil {
					s.reg.undeliverable.WithLabelValues(n.method).Inc()
					s.reg.log.Warn("listen stream write failed; stream ended", "subscriptionId", string(s.ID), "method", n.method, "error", err)
					return false, err
				}
			}
		}
	}
}

type note struct {
	method string
	params mcp.Params
}

// take empties the pending queue: list changes first, then updates in order.
func (s *Stream) take() []note {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []note
	if s.tools {
		out = append(out, note{MethodToolsListChanged, &mcp.ToolListChangedParams{}})
	}
	if s.prompts {
		out = append(out, note{MethodPromptsListChanged, &mcp.PromptListChangedParams{}})
	}
	if s.res {
		out = append(out, note{MethodResourcesListChanged, &mcp.ResourceListChangedParams{}})
	}
	for _, uri := range s.updates {
		out = append(out, note{MethodResourceUpdated, &mcp.ResourceUpdatedNotificationParams{URI: uri}})
	}
	s.tools, s.prompts, s.res = false, false, false
	s.updates = s.updates[:0]
	clear(s.queued)
	return out
}

// unqueue drops a pending update of uri (its subscription failed before
// the stream was served).
func (s *Stream) unqueue(uri string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.queued[uri] {
		return
	}
	delete(s.queued, uri)
	s.updates = slices.DeleteFunc(s.updates, func(u string) bool { return u == uri })
}

func (s *Stream) queueLists(tools, prompts, res bool) {
	if !tools && !prompts && !res {
		return
	}
	s.mu.Lock()
	s.tools = s.tools || tools
	s.prompts = s.prompts || prompts
	s.res = s.res || res
	s.mu.Unlock()
	s.wake()
}

func (s *Stream) queueUpdate(uri string) {
	s.mu.Lock()
	switch {
	case s.queued[uri]:
		s.mu.Unlock()
		return // coalesced with the pending one
	case len(s.updates) >= MaxPendingUpdates:
		s.mu.Unlock()
		s.reg.undeliverable.WithLabelValues(MethodResourceUpdated).Inc()
		s.reg.log.Warn("listen stream too slow; resources/updated dropped", "subscriptionId", string(s.ID), "uri", uri,
			"pending", fmt.Sprint(MaxPendingUpdates))
		return
	}
	s.queued[uri] = true
	s.updates = append(s.updates, uri)
	s.mu.Unlock()
	s.wake()
}

func (s *Stream) wake() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}
