package modern

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/subscriptions"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// watchOwn holds, for a listen stream of principal pr granted list
// changes, a listen on each per-principal Modern backend with pr's
// credential (upstream.Core.WatchLists), ended with the stream (the
// caller closes the returned Listens). Each list_changed lists that
// backend again for pr (backends.Manager.RelistFor), which tells pr's
// listen streams and Legacy sessions of the change it makes to their view
// (ownerChanged), and no other principal's.
func (d *Dispatcher) watchOwn(rq *request, pr identity.Principal, honored mcp.NotificationSubscriptions) *upstream.Listens {
	ctx := rq.r.Context()
	l := upstream.NewListens(ctx)
	if pr.Anonymous() || !(honored.ToolsListChanged || honored.PromptsListChanged || honored.ResourcesListChanged) {
		return l
	}
	header := rq.r.Header.Clone()
	for _, b := range d.mgr.PerPrincipalBackends() {
		name := b.Name()
		req := &upstream.Request{Revision: upstream.RevisionModern, Principal: pr, Header: header}
		relist := func(string) { d.mgr.RelistFor(ctx, pr, header, nil, name) }
		if err := d.core.WatchLists(ctx, req, b, l, relist); err != nil {
			d.log.Warn("per-principal backend's list changes not watched for this listen", "backend", name, "error", err)
		}
	}
	return l
}

// ownResource is a requested URI that a per-principal backend serves.
type ownResource struct {
	uri   string
	route aggregator.Route
}

// perPrincipal reports whether backend is discovered and used per
// principal only.
func (d *Dispatcher) perPrincipal(backend string) bool {
	b, err := d.mgr.Backend(backend)
	return err == nil && b.PerPrincipal()
}

// holdOwn subscribes each of own, for a listen stream of principal pr,
// with pr's own listen on its per-principal backend
// (upstream.Core.HoldResource, held in l and ended with the stream), its
// resources/updated queued on this stream alone; the ones the backend
// acknowledged join the stream's honored set.
func (d *Dispatcher) holdOwn(rq *request, pr identity.Principal, stream *subscriptions.Stream, own []ownResource, l *upstream.Listens) {
	for _, o := range own {
		b, err := d.mgr.Backend(o.route.Backend)
		if err != nil {
			continue
		}
		req := &upstream.Request{Method: "resources/subscribe", Name: o.uri, Revision: upstream.RevisionModern, Principal: pr, Header: rq.r.Header.Clone()}
		t := upstream.Target{Backend: b, Name: o.route.Name, Via: upstream.ViaDirect}
		uri := o.uri
		if err := d.core.HoldResource(rq.r.Context(), req, t, l, func(string) { stream.Updated(uri) }); err != nil {
			d.log.Warn("per-principal resource subscription not held", "backend", b.Name(), "uri", uri, "error", err)
			continue
		}
		stream.Honored.ResourceSubscriptions = append(stream.Honored.ResourceSubscriptions, uri)
	}
}
