package config

import (
	"fmt"
	"slices"
	"strings"
)

// OutboundAuth is a backend's own credential (a backend's `auth` key):
// vmcp never passes its client's token through (MCP authorization), it
// gets one issued for the backend instead.
type OutboundAuth struct {
	// Type is token_exchange (RFC 8693: the client's access token
	// exchanged for one whose audience is the backend) or
	// client_credentials (vmcp's own token for the backend, no user).
	Type string `yaml:"type"`
	// TokenURL is the token endpoint; "" uses the token_endpoint of the
	// discovery document of the top-level auth.issuer.
	TokenURL     string   `yaml:"token_url"`
	ClientID     string   `yaml:"client_id"`     // vmcp's client at the token endpoint
	ClientSecret string   `yaml:"client_secret"` // ${VAR} expanded; never logged or shown
	Audience     string   `yaml:"audience"`      // sent as both audience and resource (RFC 8707)
	Scopes       []string `yaml:"scopes"`        // requested scopes
}

// Outbound auth types (OutboundAuth.Type).
const (
	OutboundTokenExchange     = "token_exchange"
	OutboundClientCredentials = "client_credentials"
)

// passthroughRule is what a forward_headers entry naming a credential
// header is refused with.
const passthroughRule = "forwarding %s passes the client's credential through to the backend, " +
	"which MCP authorization forbids (a server MUST NOT pass through the token it received); " +
	"give the backend a token of its own with auth.type: token_exchange (or client_credentials)"

// credentialHeaders are the client headers forward_headers may not name.
var credentialHeaders = []string{"authorization", "cookie"}

// validateOutbound checks every backend's auth key: a known type, an HTTP
// backend, client_id and audience set, a usable token_url (or the
// top-level auth to discover it from); token_exchange needs the top-level
// auth (the subject token is the client's validated access token).
func validateOutbound(ps *problems, c *Config) {
	for i, b := range c.Backends {
		if b.Auth != nil {
			checkOutbound(ps, joinIndex("backends", i)+".auth", b, c.Auth != nil)
		}
	}
}

// checkOutbound checks backend b's auth (at key path p); inbound reports
// whether the top-level auth is set.
func checkOutbound(ps *problems, p string, b Backend, inbound bool) {
	a := b.Auth
	switch a.Type {
	case OutboundTokenExchange:
		if !inbound {
			ps.add(p+".type", "token_exchange needs the top-level auth section: the subject token is the client's validated access token")
		}
	case OutboundClientCredentials:
	default:
		ps.add(p+".type", fmt.Sprintf("unknown type %q: want token_exchange or client_credentials", a.Type))
	}
	if b.Transport == TransportStdio || b.URL == "" {
		ps.add(p, "auth applies only to HTTP backends (url)")
	}
	if a.ClientID == "" {
		ps.add(p+".client_id", "required")
	}
	if a.Audience == "" {
		ps.add(p+".audience", "required: the backend's resource identifier, the audience of its tokens")
	}
	switch {
	case a.TokenURL != "":
		secureURL(ps, p+".token_url", a.TokenURL, true)
	case !inbound:
		ps.add(p+".token_url", "required without the top-level auth section (whose issuer's discovery document gives the default)")
	}
	checkOutboundRest(ps, p, b)
}

// checkOutboundRest refuses invalid or duplicate scopes and a static
// Authorization header beside auth.
func checkOutboundRest(ps *problems, p string, b Backend) {
	for j, s := range b.Auth.Scopes {
		if !validScope(s) || slices.Contains(b.Auth.Scopes[:j], s) {
			ps.add(joinIndex(p+".scopes", j), fmt.Sprintf("invalid or duplicate scope %q", s))
		}
	}
	for k := range b.Headers {
		if strings.EqualFold(k, "Authorization") {
			ps.add(p, "the backend's headers set Authorization too; remove it (auth sets Authorization)")
		}
	}
}
