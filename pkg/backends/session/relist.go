package session

import (
	"context"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
)

// A per-principal backend has no control connection, so its
// notifications/*/list_changed arrive only on a principal's own backend
// sessions, where nothing heard them: the principal's catalogue kept the
// inventory of its first listing. Now a list_changed on a Legacy client's
// backend session of a per-principal backend lists that backend again on
// that session and publishes the result as the principal's own
// (aggregator.UpdateFor, which tells the principal's clients when its
// view changed: by the listing's difference, not the announcement, since
// the backend announces one change on each of the principal's sessions).
// Announcements arriving while a listing runs are coalesced into one more
// listing.

// listChangedKinds maps a backend's list_changed notifications to the
// kinds they announce.
var listChangedKinds = map[string]aggregator.Kind{
	"notifications/tools/list_changed":     aggregator.KindTools,
	"notifications/prompts/list_changed":   aggregator.KindPrompts,
	"notifications/resources/list_changed": aggregator.KindResources,
}

// relister lists one backend session of a per-principal backend again
// when the backend announces a change on it.
type relister struct {
	s *Set
	b *backends.Backend
	e *entry

	mu      sync.Mutex
	running bool              // a run goroutine is listing
	kinds   []aggregator.Kind // announced since the running listing began
}

// relistOn is receiving middleware for e, a session of per-principal
// backend b in s: list_changed starts (or extends) a relisting.
func (s *Set) relistOn(b *backends.Backend, e *entry) mcp.Middleware {
	r := &relister{s: s, b: b, e: e}
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if k, ok := listChangedKinds[method]; ok {
				r.announce(k)
			}
			return next(ctx, method, req)
		}
	}
}

// announce records kind and starts the listing goroutine unless one runs;
// that goroutine (owned by r) ends once no announcement is left.
func (r *relister) announce(k aggregator.Kind) {
	r.mu.Lock()
	if !slices.Contains(r.kinds, k) {
		r.kinds = append(r.kinds, k)
	}
	start := !r.running
	r.running = true
	r.mu.Unlock()
	if start {
		go r.run()
	}
}

func (r *relister) run() {
	for {
		r.mu.Lock()
		kinds := r.kinds
		r.kinds = nil
		if len(kinds) == 0 {
			r.running = false
			r.mu.Unlock()
			return
		}
		r.mu.Unlock()
		r.list()
	}
}

// list lists the backend on the session (bounded: inventory's timeout)
// and publishes it as the bound principal's own.
func (r *relister) list() {
	<-r.e.ready // closed by connect whatever its outcome
	pr := r.s.principal()
	if r.e.cs == nil || pr.Anonymous() {
		return
	}
	inv, err := r.b.ListSession(context.Background(), r.e.cs)
	if err != nil {
		r.b.Logger().Warn("per-principal backend announced a change; listing it again failed", "principal", pr.String(), "error", err)
		return
	}
	r.s.m.PublishFor(pr, inv) // by its difference only: each of pr's sessions hears the same announcement
}
