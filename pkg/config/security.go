package config

import (
	"fmt"
	"time"
)

// Security configures tool-definition pinning (pkg/pin): what vmcp does
// when a backend offers a tool under a name it already listed with another
// definition (a "rug pull").
type Security struct {
	// ToolChanges is "warn" (default: logged, counted, shown on /status,
	// the new definition listed), "deny" (the changed tool is withheld from
	// every list and call until accepted) or "allow" (re-pinned silently).
	ToolChanges string `yaml:"tool_changes"`
	// AcceptToolChanges names tools whose change a load of this file
	// accepts, once: an entry new to the running configuration (not in the
	// previous load's list; every entry at start) accepts its tool's
	// pending change, else the next one seen; an entry a reload keeps does
	// nothing again. With Offered, only that definition is accepted.
	AcceptToolChanges []ToolRef `yaml:"accept_tool_changes"`
	// AdminToken enables POST /admin/tool-changes/accept (vmcp
	// accept-tool-change) for requests bearing it; ${VAR} expanded, at
	// least 32 bytes. Empty (default): no admin endpoint.
	AdminToken string `yaml:"admin_token"`
	// PinRetention is how long a pin outlives its tool: a tool its backend
	// no longer offers, or every tool of a backend a reload removed, keeps
	// its pin this long (dropped and offered again with another definition
	// within it, it is a change), then the pin is deleted. Default 720h (30
	// days), at least 1h.
	PinRetention Duration `yaml:"pin_retention"`
}

// ToolRef names one backend tool by the backend's own name for it, and
// optionally the definition accepted.
type ToolRef struct {
	Backend string `yaml:"backend"`
	Tool    string `yaml:"tool"`
	// Offered, if set, is the SHA-256 (64 lower-case hex digits) of the
	// definition accepted, as /status shows it: another one is not.
	Offered string `yaml:"offered"`
}

// Values of Security.ToolChanges.
const (
	ToolChangesAllow = "allow"
	ToolChangesWarn  = "warn"
	ToolChangesDeny  = "deny"
)

// minAdminToken is the least length of security.admin_token.
const minAdminToken = 32

// DefaultPinRetention and MinPinRetention bound security.pin_retention.
const (
	DefaultPinRetention = 30 * 24 * time.Hour
	MinPinRetention     = time.Hour
)

// applySecurityDefaults sets tool_changes to warn and pin_retention to
// DefaultPinRetention when unset.
func (c *Config) applySecurityDefaults() {
	setString(&c.Security.ToolChanges, ToolChangesWarn)
	setDuration(&c.Security.PinRetention, DefaultPinRetention)
}

// validateSecurity checks tool_changes, that each accepted tool names a
// configured backend (names nil: backends malformed, not checked) and
// the admin token's length.
func validateSecurity(ps *problems, c *Config, names map[string]bool) {
	s := c.Security
	switch s.ToolChanges {
	case ToolChangesAllow, ToolChangesWarn, ToolChangesDeny:
	default:
		ps.add("security.tool_changes", fmt.Sprintf("want %q, %q or %q, got %q", ToolChangesAllow, ToolChangesWarn, ToolChangesDeny, s.ToolChanges))
	}
	for i, r := range s.AcceptToolChanges {
		p := joinIndex("security.accept_tool_changes", i)
		switch {
		case r.Backend == "":
			ps.add(p+".backend", "required: the backend whose tool change is accepted")
		case names != nil && !names[r.Backend]:
			ps.add(p+".backend", fmt.Sprintf("unknown backend %q", r.Backend))
		}
		if r.Tool == "" {
			ps.add(p+".tool", "required: the backend's own name of the tool")
		}
		if r.Offered != "" && !IsHash(r.Offered) {
			ps.add(p+".offered", "want the 64 lower-case hex digits of a definition's hash, as /status shows it")
		}
	}
	if s.PinRetention.D() < MinPinRetention {
		ps.add("security.pin_retention", fmt.Sprintf("must be at least %s, got %s", MinPinRetention, s.PinRetention.D()))
	}
	if t := s.AdminToken; t != "" && len(t) < minAdminToken {
		ps.add("security.admin_token", fmt.Sprintf("must be at least %d bytes after ${VAR} expansion, got %d", minAdminToken, len(t)))
	}
}

// IsHash reports whether s is a SHA-256 in lower-case hex (pin.Hash), as
// an offered hash must be written.
func IsHash(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
