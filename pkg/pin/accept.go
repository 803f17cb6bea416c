package pin

import (
	"cmp"
	"errors"
	"fmt"

	"github.com/vmcp/vmcp/pkg/config"
)

// ErrNoChange is Accept's error for a tool with no pending change.
var ErrNoChange = fmt.Errorf("no pending definition change")

// ErrOtherOffered is AcceptOffered's error when the backend now offers
// another definition than the one the operator reviewed.
var ErrOtherOffered = fmt.Errorf("the backend now offers another definition")

// Accept makes the definition backend offers for tool its pin (here and,
// clustered, on every node), so deny lists it again; for a per-principal
// backend, the definition each principal with a pending change is
// offered. An error wraps ErrNoChange when the tool's definition is its
// pin or unknown here.
func (p *Pins) Accept(backend, tool string) error { return p.AcceptOffered(backend, tool, "") }

// AcceptOffered is Accept of the definition whose hash is offered (as
// /status shows it; "": whatever is offered now), so a backend redefining
// the tool again while the operator reviews it is not accepted unseen: an
// error wraps ErrOtherOffered then.
func (p *Pins) AcceptOffered(backend, tool, offered string) error {
	p.obs.Lock()
	p.mu.Lock()
	var take []key
	var hashes []string
	other := ""
	for k, e := range p.state {
		switch {
		case k.backend != backend || k.tool != tool || e.offered == e.pinned:
		case offered != "" && e.offered != offered:
			other = e.offered
		default:
			take, hashes = append(take, k), append(hashes, e.offered)
		}
	}
	p.mu.Unlock()
	if len(take) == 0 {
		p.obs.Unlock()
		if other != "" {
			return fmt.Errorf("tool %q of backend %q: %w (%s, not %s)", tool, backend, ErrOtherOffered, other, offered)
		}
		return fmt.Errorf("tool %q of backend %q: %w", tool, backend, ErrNoChange)
	}
	for i, k := range take {
		p.repin(k, hashes[i])
	}
	p.obs.Unlock()
	for i, k := range take {
		p.count(backend, OutcomeAccepted)
		p.opts.Log.Info("tool definition change accepted", "backend", backend, "tool", tool, "principal", k.owner, "hash", hashes[i])
	}
	p.notify()
	return nil
}

// Configure applies a (re)loaded security section: the mode, and the
// accept_tool_changes entries new to it (not in the previous load's
// list): each accepts its tool's pending change now, else the next change
// seen (armed). An entry kept from the previous load does nothing again,
// so a reload (a SIGHUP for log rotation) never accepts a later change;
// an entry with offered accepts only the definition of that hash.
func (p *Pins) Configure(s config.Security) {
	p.mu.Lock()
	p.mode = cmp.Or(s.ToolChanges, config.ToolChangesWarn)
	p.keep = cmp.Or(s.PinRetention.D(), config.DefaultPinRetention)
	prev, armed, fresh := p.accepts, map[key]string{}, map[key]bool{}
	p.accepts = make(map[config.ToolRef]bool, len(s.AcceptToolChanges))
	var now []config.ToolRef
	for _, r := range s.AcceptToolChanges {
		p.accepts[r] = true
		k := key{backend: r.Backend, tool: r.Tool} // any principal's (armed ignores owner)
		switch {
		case prev[r]: // applied by an earlier load: still armed if no change took it
			if h, ok := p.armed[k]; ok {
				armed[k] = h
			}
		case p.pending(r.Backend, r.Tool):
			now = append(now, r)
		default:
			armed[k], fresh[k] = r.Offered, true
		}
	}
	p.armed = armed
	for k := range p.armedUsed { // the principals an armed accept took stay taken while it stays armed
		ak := key{backend: k.backend, tool: k.tool}
		if _, ok := armed[ak]; !ok || fresh[ak] {
			delete(p.armedUsed, k)
		}
	}
	p.mu.Unlock()
	for _, r := range now {
		err := p.AcceptOffered(r.Backend, r.Tool, r.Offered)
		if errors.Is(err, ErrOtherOffered) { // not yet the definition named: accept it when offered
			p.mu.Lock()
			p.armed[key{backend: r.Backend, tool: r.Tool}] = r.Offered
			p.mu.Unlock()
		}
	}
	p.notify()
}
