package legacy

import (
	"slices"
	"time"

	"github.com/vmcp/vmcp/pkg/identity"
)

// SessionSummary is one live Legacy client session as the operator page
// lists it. ID is the whole Mcp-Session-Id: callers show a prefix only.
type SessionSummary struct {
	ID              string
	Client          string // clientInfo.name from initialize ("" if none)
	ClientVersion   string // clientInfo.version
	Revision        string // the negotiated protocol version
	Principal       identity.Principal
	Created         time.Time // when it was initialized
	LastActive      time.Time // when its last POST began
	BackendSessions int       // backend sessions it holds open
}

// Sessions returns at most n live client sessions, newest first, and how
// many are live in all.
func (d *Dispatcher) Sessions(n int) ([]SessionSummary, int) {
	d.mu.Lock()
	live := make([]*clientSession, 0, len(d.sessions))
	for _, s := range d.sessions {
		live = append(live, s)
	}
	d.mu.Unlock()
	out := make([]SessionSummary, 0, len(live))
	for _, s := range live {
		out = append(out, s.summary())
	}
	slices.SortFunc(out, func(a, b SessionSummary) int { return b.Created.Compare(a.Created) })
	return out[:min(n, len(out))], len(live)
}

// summary is s as SessionSummary.
func (s *clientSession) summary() SessionSummary {
	s.mu.Lock()
	sum := SessionSummary{ID: s.id, Principal: s.owner, Created: s.created, LastActive: s.active}
	s.mu.Unlock()
	if ip := s.front.InitializeParams(); ip != nil {
		sum.Revision = ip.ProtocolVersion
		if ip.ClientInfo != nil {
			sum.Client, sum.ClientVersion = ip.ClientInfo.Name, ip.ClientInfo.Version
		}
	}
	if s.backends != nil {
		sum.BackendSessions = s.backends.Len()
	}
	return sum
}
