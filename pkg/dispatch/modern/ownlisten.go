package modern

import (
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/identity"
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
