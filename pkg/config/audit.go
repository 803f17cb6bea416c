package config

import (
	"fmt"
	"strings"
)

// Audit configures the audit log: one JSON object per line for every
// client request at the MCP endpoint (pkg/audit). nil (no audit key): no
// audit log.
type Audit struct {
	// Path is the file appended to (required); it is reopened on SIGHUP,
	// so a rotated (renamed) file is followed by a new one.
	Path string `yaml:"path"`
	// Arguments writes tools/call and prompts/get arguments, capped at
	// 1 KB, with the Redact keys' values replaced. Default false.
	Arguments bool `yaml:"arguments"`
	// Redact lists argument keys whose values are replaced, at any depth:
	// a key is redacted when, lower-cased and without "_", "-", "." and
	// spaces, it contains an entry so normalised ("token" redacts
	// access_token, refreshToken and X-Auth-Token). Default DefaultRedact().
	Redact []string `yaml:"redact"`
}

// DefaultRedact are the argument keys redacted when audit.redact is unset:
// password, token and secret, and the other common names of credentials
// (matched as Audit.Redact says: "apikey" redacts api_key and apiKey).
func DefaultRedact() []string {
	return []string{"password", "token", "secret", "authorization", "cookie", "apikey", "credential", "privatekey"}
}

// applyAuditDefaults fills audit.redact when the file leaves it unset.
func (c *Config) applyAuditDefaults() {
	if c.Audit != nil && c.Audit.Redact == nil {
		c.Audit.Redact = DefaultRedact()
	}
}

// validateAudit requires audit.path and redact keys with something to
// match once normalised (not only _ - . and spaces).
func validateAudit(ps *problems, c *Config) {
	a := c.Audit
	if a == nil {
		return
	}
	if a.Path == "" {
		ps.add("audit.path", "required: the file the audit log is appended to")
	}
	for i, k := range a.Redact {
		switch {
		case k == "":
			ps.add(fmt.Sprintf("audit.redact[%d]", i), "must not be empty")
		case strings.Trim(k, "_-. ") == "": // matching drops these: nothing is left to match
			ps.add(fmt.Sprintf("audit.redact[%d]", i), fmt.Sprintf("%q names no key: keys are matched without _ - . and spaces", k))
		}
	}
}

// emptyRedact warns when the file sets audit.redact to an empty list: it
// replaces DefaultRedact, so no argument value is redacted (a warning,
// not a refusal: an operator may mean it).
func emptyRedact(ps *problems, c *Config) []Problem {
	if c.Audit == nil || c.Audit.Redact == nil || len(c.Audit.Redact) > 0 {
		return nil
	}
	msg := "an empty list replaces the default keys (password, token, secret, …): no argument value is redacted; leave the key out for the defaults"
	if w, ok := ps.warn(SeverityWarning, "audit.redact", msg); ok {
		return []Problem{w}
	}
	return nil
}
