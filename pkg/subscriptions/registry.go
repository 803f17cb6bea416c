// Package subscriptions runs the Modern (2026-07-28) subscriptions/listen
// streams: what each stream was granted (the honored set of its
// acknowledgement), the notifications pending for it, and the upstream
// resource subscriptions the streams hold, reference-counted per backend and
// URI. It never writes HTTP: the dispatcher owning a stream passes a Sink to
// Stream.Serve on the stream's own goroutine.
package subscriptions

import (
	"context"
	"encoding/json"
	"github.com/prometheus/client_golang/prometheus"
	"log/slog"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/identity"
	"golang.org/x/sync/errgroup"
)

// Upstream subscribes vmcp itself to a resource on a backend, by the
// backend's own mechanism (a listen stream on a Modern backend,
// resources/subscribe on a Legacy one). The registry calls it at most once
// at a time per (backend, uri), on the first and the last holder.
type Upstream interface {
	SubscribeResource(ctx context.Context, backend, uri string) error
	UnsubscribeResource(ctx context.Context, backend, uri string) error
}

// Resource is one requested resource subscription and the backend serving it.
type Resource struct {
	URI     string
	Backend string
}

// upstreamTimeout bounds one Upstream call made by the registry.
const upstreamTimeout = 30 * time.Second

// Registry holds the open listen streams and the upstream resource
// subscriptions they share. It is safe for concurrent use.
type Registry struct {
	up  Upstream
	log *slog.Logger
	// undeliverable counts messages a stream could not take, by method.
	undeliverable *prometheus.CounterVec

	mu      sync.Mutex
	streams map[*Stream]struct{}
	byURI   map[string]map[*Stream]struct{}
	refs    map[Resource]*ref
	closed  bool
}

// ref counts the streams holding one upstream subscription. mu orders the
// upstream calls of its key, so a subscribe and an unsubscribe racing for
// the same URI reach the backend in the order their counts changed.
type ref struct {
	mu    sync.Mutex
	count int  // streams holding it (under mu)
	up    bool // subscribed upstream (under mu)
	users int  // goroutines using this entry (under Registry.mu)
}

// NewRegistry returns an empty registry subscribing through up (nil: no
// resource subscription is ever granted). A nil logger discards.
func NewRegistry(up Upstream, log *slog.Logger, undeliverable *prometheus.CounterVec) *Registry {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if undeliverable == nil {
		undeliverable = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vmcp_undeliverable_messages_total"}, []string{"method"})
	}
	return &Registry{up: up, log: log, undeliverable: undeliverable, streams: map[*Stream]struct{}{},
		byURI: map[string]map[*Stream]struct{}{}, refs: map[Resource]*ref{}}
}

// Open registers a listen stream with subscription id id (the listen
// request's raw JSON-RPC id). lists carries the granted list_changed kinds
// (its ResourceSubscriptions is ignored); each of resources is subscribed
// upstream first, and Honored lists, in request order, the ones that
// succeeded. After Close the stream is returned already done, honoring
// nothing.
func (r *Registry) Open(ctx context.Context, id json.RawMessage, lists mcp.NotificationSubscriptions, resources []Resource) *Stream {
	return r.OpenFor(ctx, identity.Principal{}, id, lists, resources)
}

// OpenFor is Open for a stream of principal p (Stream.Principal), whose
// list_changed notifications ListChangedFor decides per principal.
func (r *Registry) OpenFor(ctx context.Context, p identity.Principal, id json.RawMessage, lists mcp.NotificationSubscriptions, resources []Resource) *Stream {
	s := newStream(r, id)
	s.Principal = p
	s.Honored = mcp.NotificationSubscriptions{ToolsListChanged: lists.ToolsListChanged,
		PromptsListChanged: lists.PromptsListChanged, ResourcesListChanged: lists.ResourcesListChanged}
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		s.Honored = mcp.NotificationSubscriptions{} // nothing will be delivered
		s.end()
		return s
	}
	r.streams[s] = struct{}{}
	for _, res := range resources { // routed before the upstream subscription: no update is missed
		r.index(s, res, true)
	}
	r.mu.Unlock()

	ok := make([]bool, len(resources))
	if r.up != nil {
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(8)
		for i, res := range resources {
			g.Go(func() error {
				ok[i] = r.acquire(gctx, res)
				return nil
			})
		}
		_ = g.Wait()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	for i, res := range resources {
		if !ok[i] {
			r.index(s, res, false)
			s.unqueue(res.URI)
			continue
		}
		s.held = append(s.held, res)
		s.Honored.ResourceSubscriptions = append(s.Honored.ResourceSubscriptions, res.URI)
	}
	return s
}

// index adds (or removes) s as a stream subscribed to res. r.mu is held.
func (r *Registry) index(s *Stream, res Resource, add bool) {
	set := r.byURI[res.URI]
	if add {
		if set == nil {
			set = map[*Stream]struct{}{}
			r.byURI[res.URI] = set
		}
		set[s] = struct{}{}
		s.uris[res] = true
		return
	}
	delete(s.uris, res)
	for other := range s.uris {
		if other.URI == res.URI {
			return // the same URI through another backend
		}
	}
	delete(set, s)
	if len(set) == 0 {
		delete(r.byURI, res.URI)
	}
}

// Release forgets s and drops its upstream subscriptions (the last holder
// of a URI unsubscribes vmcp from the backend). It is idempotent.
func (r *Registry) Release(s *Stream) {
	r.mu.Lock()
	if _, ok := r.streams[s]; !ok {
		r.mu.Unlock()
		return
	}
	delete(r.streams, s)
	for res := range s.uris {
		r.index(s, res, false)
	}
	held := s.held
	s.held = nil
	r.mu.Unlock()
	for _, res := range held {
		r.drop(res)
	}
}

// acquire takes one reference on res, subscribing upstream on the first.
func (r *Registry) acquire(ctx context.Context, res Resource) bool {
	e := r.use(res)
	defer r.unuse(res, e)
	e.mu.Lock()
	defer e.mu.Unlock()
	if !e.up {
		uctx, cancel := context.WithTimeout(ctx, upstreamTimeout)
		err := r.up.SubscribeResource(uctx, res.Backend, res.URI)
		cancel()
		if err != nil {
			r.log.Warn("upstream resource subscription failed; not honored", "backend", res.Backend, "uri", res.URI, "error", err)
			return false
		}
		e.up = true
	}
	e.count++
	return true
}

// drop releases one reference on res, unsubscribing upstream on the last.
func (r *Registry) drop(res Resource) {
	e := r.use(res)
	defer r.unuse(res, e)
	e.mu.Lock()
	defer e.mu.Unlock()
	e.count--
	if e.count > 0 || !e.up {
		return
	}
	e.up = false
	ctx, cancel := context.WithTimeout(context.Background(), upstreamTimeout)
	defer cancel()
	if err := r.up.UnsubscribeResource(ctx, res.Backend, res.URI); err != nil {
		r.log.Warn("upstream resource unsubscription failed", "backend", res.Backend, "uri", res.URI, "error", err)
	}
}

func (r *Registry) use(res Resource) *ref {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.refs[res]
	if e == nil {
		e = &ref{}
		r.refs[res] = e
	}
	e.users++
	return e
}

// unuse forgets the entry once nobody uses or holds it.
func (r *Registry) unuse(res Resource, e *ref) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.users--
	if e.users > 0 {
		return
	}
	e.mu.Lock()
	idle := e.count == 0 && !e.up
	e.mu.Unlock()
	if idle {
		delete(r.refs, res)
	}
}

// refCount is the number of streams holding the upstream subscription of uri on
// backend (0 when vmcp is not subscribed).
func (r *Registry) refCount(backend, uri string) int {
	r.mu.Lock()
	e := r.refs[Resource{URI: uri, Backend: backend}]
	r.mu.Unlock()
	if e == nil {
		return 0
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.count
}

// ListChanged queues one list_changed notification per given kind for
// every stream granted it; a kind already pending for a stream is not
// queued twice (coalesced).
func (r *Registry) ListChanged(tools, prompts, resources bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.streams {
		s.queueLists(tools && s.Honored.ToolsListChanged, prompts && s.Honored.PromptsListChanged,
			resources && s.Honored.ResourcesListChanged)
	}
}

// ListChangedFor is ListChanged with the kinds decided per stream by its
// principal (changed reports which of that principal's lists changed), so
// a principal is told only of changes to its own view. changed is called
// with the registry locked; it must not call back into the registry.
func (r *Registry) ListChangedFor(changed func(identity.Principal) (tools, prompts, resources bool)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.streams {
		tools, prompts, resources := changed(s.Principal)
		s.queueLists(tools && s.Honored.ToolsListChanged, prompts && s.Honored.PromptsListChanged,
			resources && s.Honored.ResourcesListChanged)
	}
}

// ResourceUpdated queues notifications/resources/updated for uri, served by
// backend, on every stream subscribed to it.
func (r *Registry) ResourceUpdated(backend, uri string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for s := range r.byURI[uri] {
		if s.uris[Resource{URI: uri, Backend: backend}] {
			s.queueUpdate(uri)
		}
	}
}

// Len is the number of open streams.
func (r *Registry) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.streams)
}

// Close ends every open stream gracefully (their Done channels close; their
// owners send the listen result and release them) and makes later Open
// calls return streams that are already done.
func (r *Registry) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return
	}
	r.closed = true
	for s := range r.streams {
		s.end()
	}
}
