// Package subscriptions tracks the Modern (2026-07-28) subscriptions/listen
// streams: which stream asked for which notifications (the honored set sent
// in its acknowledgement) and how to reach it (a Sink). It never writes HTTP
// itself; the dispatcher that owns a stream supplies its Sink.
package subscriptions

import (
	"encoding/json"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Sink delivers JSON-RPC notifications on one listen stream, in call order.
// Send returns an error once the stream is gone (the client closed it).
type Sink interface {
	Send(method string, params mcp.Params) error
}

// Stream is one open subscriptions/listen stream. ID is the listen request's
// raw JSON-RPC id, which is also its subscription id (2026-07-28
// subscriptions: every message on the stream carries it in _meta).
type Stream struct {
	ID      json.RawMessage
	Honored mcp.NotificationSubscriptions

	sink Sink
	mu   sync.Mutex    // serialises Send
	done chan struct{} // closed by Registry.Close (graceful end)
}

// Send delivers one notification on the stream after setting
// _meta[mcp.MetaKeySubscriptionID] on params to the stream's ID, so params
// must not be shared with another stream. params may be nil.
func (s *Stream) Send(method string, params mcp.Params) error {
	if params != nil {
		m := params.GetMeta()
		if m == nil {
			m = map[string]any{}
		}
		m[mcp.MetaKeySubscriptionID] = s.ID
		params.SetMeta(m)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sink.Send(method, params)
}

// Done is closed when the registry ends the stream gracefully (shutdown);
// the owner then sends the listen result and releases the stream.
func (s *Stream) Done() <-chan struct{} { return s.done }

// Registry holds the open listen streams, keyed by subscription id. Two
// clients may use the same JSON-RPC id, so an id can key several streams.
// It is safe for concurrent use.
type Registry struct {
	mu      sync.Mutex
	streams map[string][]*Stream
	closed  bool
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{streams: map[string][]*Stream{}}
}

// Listen registers a stream with subscription id id, the honored set from
// its acknowledgement, and the sink that reaches it. After Close, the
// returned stream is already done.
func (r *Registry) Listen(id json.RawMessage, honored mcp.NotificationSubscriptions, sink Sink) *Stream {
	s := &Stream{ID: id, Honored: honored, sink: sink, done: make(chan struct{})}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		close(s.done)
		return s
	}
	r.streams[string(id)] = append(r.streams[string(id)], s)
	return s
}

// Release forgets s (its client closed it or it ended); it is idempotent.
func (r *Registry) Release(s *Stream) {
	r.mu.Lock()
	defer r.mu.Unlock()
	key := string(s.ID)
	list := r.streams[key]
	for i, x := range list {
		if x == s {
			list = append(list[:i:i], list[i+1:]...)
			break
		}
	}
	if len(list) == 0 {
		delete(r.streams, key)
	} else {
		r.streams[key] = list
	}
}

// Lookup returns the open streams with subscription id id.
func (r *Registry) Lookup(id json.RawMessage) []*Stream {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*Stream(nil), r.streams[string(id)]...)
}

// Len is the number of open streams.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, l := range r.streams {
		n += len(l)
	}
	return n
}

// Close ends every open stream gracefully (their Done channels close) and
// makes later Listen calls return streams that are already done.
func (r *Registry) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	for _, l := range r.streams {
		for _, s := range l {
			close(s.done)
		}
	}
}
