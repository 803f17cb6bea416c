package vmcp

import (
	"strings"
	"time"

	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/outbound"
	"github.com/vmcp/vmcp/pkg/status"
)

// Status is the operator view of this node (GET /status): each configured
// backend with its transport, negotiated revision, state, last error and
// the counts of its tools, prompts and resources the catalogue advertises;
// client sessions and streams; the catalogue's sizes, withheld names (the
// aggregator's last error, one line each) and conflicts resolved by order.
func (s *Server) Status() status.Report {
	cat := s.agg.Current()
	type counts struct{ tools, prompts, resources int }
	per := map[string]*counts{}
	at := func(backend string) *counts {
		if per[backend] == nil {
			per[backend] = &counts{}
		}
		return per[backend]
	}
	for _, t := range cat.Tools {
		if _, r, ok := cat.Tool(t.Name); ok {
			at(r.Backend).tools++
		}
	}
	for _, p := range cat.Prompts {
		if _, r, ok := cat.Prompt(p.Name); ok {
			at(r.Backend).prompts++
		}
	}
	for _, res := range cat.Resources {
		if r, ok := cat.Resource(res.URI); ok {
			at(r.Backend).resources++
		}
	}
	transport := map[string]string{}
	for _, b := range s.mgr.Backends() { // the running set (a reload changes it)
		transport[b.Name()] = b.Transport()
	}
	rep := status.Report{
		Name: s.cfg.Name, Version: Version, Time: time.Now().UTC(),
		Ready:    s.mgr.Ready() && s.cluster.Check() == nil,
		Sessions: status.Sessions{Legacy: s.SessionCount(), ModernListens: s.ModernListens(), ParkedCalls: s.ParkedCalls()},
		Catalogue: status.Catalogue{Tools: len(cat.Tools), Prompts: len(cat.Prompts),
			Resources: len(cat.Resources), Templates: len(cat.Templates)},
		Reloads: s.Reloads(),
	}
	for _, st := range s.mgr.Status() {
		c := at(st.Name)
		rep.Backends = append(rep.Backends, status.Backend{Name: st.Name, Transport: transport[st.Name],
			Revision: st.ProtocolVersion, State: string(st.State), LastError: st.History.LastError,
			LastErrorAt: st.LastErrorAt, Since: st.Since, Restarts: st.Restarts, LastRestart: st.LastRestart,
			Tools: c.tools, Prompts: c.prompts, Resources: c.resources, Outbound: outboundRow(st.Outbound)})
	}
	s.operatorFields(&rep)
	if err := s.agg.LastError(); err != nil {
		rep.Catalogue.Withheld = strings.Split(err.Error(), "\n")
	}
	rep.Catalogue.ToolChanges = s.toolChanges()
	for _, c := range s.agg.Conflicts() {
		rep.Catalogue.Conflicts = append(rep.Catalogue.Conflicts,
			status.Conflict{Kind: string(c.Kind), Key: c.Key, Winner: c.Winner, Loser: c.Loser})
	}
	return rep
}

// operatorFields adds to rep what happened since start: the process's
// start time, uptime and config file, since when it is ready (the
// longest-ready backend among those ready now), the last minute's request
// rates and the newest Legacy sessions.
func (s *Server) operatorFields(rep *status.Report) {
	now := rep.Time
	rep.Started = s.op.started
	rep.UptimeSeconds = int64(now.Sub(s.op.started).Seconds())
	if p := s.op.config.Load(); p != nil {
		rep.Config = *p
	}
	if rep.Ready {
		for _, st := range s.mgr.Status() {
			up := st.State == backends.StateReady || st.State == backends.StatePerPrincipal
			if up && !st.Since.IsZero() && (rep.ReadySince.IsZero() || st.Since.Before(rep.ReadySince)) {
				rep.ReadySince = st.Since.UTC()
			}
		}
	}
	rep.Rates = s.op.currentRates(now)
	list, _ := s.legacy.Sessions(statusSessions)
	rep.Sessions.List = sessionRows(list, now)
}

// outboundRow is a backend's outbound token counts for /status (nil: no auth).
func outboundRow(s *outbound.Stats) *status.Outbound {
	if s == nil {
		return nil
	}
	return &status.Outbound{Type: s.Type, Issued: s.Issued, Refused: s.Refused, Failed: s.Failed, Rejected: s.Rejected, RefusedCached: s.RefusedCached}
}
