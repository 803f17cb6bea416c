package legacy

import (
	"context"

	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// watchOwn holds, for session s, a listen on each per-principal backend
// its backend session reaches at a Modern revision (a stateless backend
// keeps no Legacy session, so no GET stream carries its list_changed):
// upstream.Core.WatchLists, in s.listens, ended with s. Each list_changed
// lists that backend again for s's principal on s's own session
// (backends.Manager.RelistFor), which tells that principal's clients of
// the change it makes to their view (ownviews.go), and no one else.
func (d *Dispatcher) watchOwn(ctx context.Context, s *clientSession) {
	pr := s.principal()
	if pr.Anonymous() {
		return
	}
	for _, b := range d.mgr.PerPrincipalBackends() {
		name := b.Name()
		req := &upstream.Request{Revision: upstream.RevisionLegacy, Principal: pr, Sessions: s.backends, Caps: s.capabilitiesRaw()}
		relist := func(string) { d.mgr.RelistFor(s.ended, pr, nil, s.backends, name) }
		if err := d.core.WatchLists(ctx, req, b, s.listens, relist); err != nil {
			d.log.Warn("per-principal backend's list changes not watched for this session", "session", telemetry.SessionTag(s.id), "backend", name, "error", err)
		}
	}
}
