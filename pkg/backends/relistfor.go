package backends

import (
	"context"
	"net/http"

	"github.com/vmcp/vmcp/pkg/identity"
)

// PerPrincipalBackends are the backends discovered and used per principal
// only (PerPrincipal), in config order.
func (m *Manager) PerPrincipalBackends() []*Backend {
	var out []*Backend
	for _, b := range m.backends() {
		if b.perPrincipal {
			out = append(out, b)
		}
	}
	return out
}

// RelistFor lists the per-principal backend name again with pr's
// credential and publishes its inventory as pr's own (DiscoverFor for one
// backend, after it announced a change on pr's listen): on set's session
// when set, else on a session of its own carrying header. A failed
// listing is logged and keeps the last inventory.
func (m *Manager) RelistFor(ctx context.Context, pr identity.Principal, header http.Header, set Sessions, name string) {
	b, err := m.Backend(name)
	if err != nil || !b.perPrincipal || pr.Anonymous() {
		return
	}
	inv, err := b.discover(identity.With(ctx, pr), header, set)
	if err != nil {
		b.log.Warn("per-principal backend not listed again for this principal", "principal", pr.String(), "error", err)
		return
	}
	m.agg.UpdateFor(pr.Key(), inv)
}
