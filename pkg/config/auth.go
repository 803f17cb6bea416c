package config

import (
	"fmt"
	"net"
	"net/url"
	"slices"
	"strings"
)

// validateAuth checks the auth section (MCP authorization): issuer and
// audience are required absolute URLs, https unless the host is loopback
// (OAuth 2.1 requires TLS); the audience has no fragment (RFC 8707); scopes
// are RFC 6749 scope tokens, each listed once. An auth key written with no
// value is refused, so a typo never turns authentication off.
func validateAuth(ps *problems, c *Config) {
	a := c.Auth
	if a == nil {
		if _, written := ps.ix.entries["auth"]; written {
			ps.add("auth", "empty: set issuer and audience, or remove the key to run without authentication")
		}
		return
	}
	secureURL(ps, "auth.issuer", a.Issuer, true)
	if secureURL(ps, "auth.audience", a.Audience, true) {
		if u, _ := url.Parse(a.Audience); u.Fragment != "" || strings.Contains(a.Audience, "#") {
			ps.add("auth.audience", "must not contain a fragment (RFC 8707 resource)")
		}
	}
	if a.JWKSURL != "" {
		secureURL(ps, "auth.jwks_url", a.JWKSURL, false)
	}
	for i, s := range a.RequiredScopes {
		p := joinIndex("auth.required_scopes", i)
		switch {
		case !validScope(s):
			ps.add(p, fmt.Sprintf("invalid scope %q: want printable ASCII without spaces, quotes or backslashes", s))
		case slices.Contains(a.RequiredScopes[:i], s):
			ps.add(p, fmt.Sprintf("duplicate scope %q", s))
		}
	}
	if strings.ContainsAny(a.ResourceName, "\x00\r\n") {
		ps.add("auth.resource_name", "must not contain control characters")
	}
}

// secureURL checks that s is an absolute https URL (http only on a
// loopback host) without query; required reports a missing value.
func secureURL(ps *problems, key, s string, required bool) bool {
	if s == "" {
		if required {
			ps.add(key, "required")
		}
		return false
	}
	u, err := url.Parse(s)
	if err != nil || u.Host == "" || (u.Scheme != "https" && u.Scheme != "http") {
		ps.add(key, fmt.Sprintf("invalid URL %q: want an absolute https URL", s))
		return false
	}
	if u.Scheme == "http" && !loopback(u.Hostname()) {
		ps.add(key, fmt.Sprintf("%q must use https (http is allowed only on a loopback host)", s))
		return false
	}
	if u.RawQuery != "" {
		ps.add(key, fmt.Sprintf("%q must not have a query", s))
		return false
	}
	return true
}

func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// validScope reports whether s is an RFC 6749 scope-token (%x21 / %x23-5B /
// %x5D-7E).
func validScope(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < 0x21 || r > 0x7e || r == '"' || r == '\\' {
			return false
		}
	}
	return true
}
