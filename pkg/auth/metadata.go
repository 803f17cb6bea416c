package auth

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"

	sdkauth "github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// WellKnownPath is where RFC 9728 protected resource metadata lives; a
// resource with a path has it at WellKnownPath + path (§3.1).
const WellKnownPath = "/.well-known/oauth-protected-resource"

// metadataURL is the RFC 9728 §3.1 metadata URL of resource: the
// well-known path inserted between its host and its path.
func metadataURL(resource string) (string, error) {
	u, err := url.Parse(resource)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return "", fmt.Errorf("auth: audience %q must be an absolute http(s) URL (the RFC 8707 resource)", resource)
	}
	return u.Scheme + "://" + u.Host + suffixed(u.Path), nil
}

func suffixed(path string) string {
	return WellKnownPath + strings.TrimSuffix(path, "/")
}

// MetadataURL is the absolute URL of the protected resource metadata that
// 401 and 403 challenges name (resource_metadata), derived from the
// audience: https://vmcp.example.com/mcp gives
// https://vmcp.example.com/.well-known/oauth-protected-resource/mcp.
func (a *Authenticator) MetadataURL() string { return a.metadataURL }

// MetadataPaths are the paths the metadata is served at: the bare
// well-known path, and the path-suffixed forms for the MCP endpoint path
// and for the audience's path when it differs (behind a path-rewriting
// proxy).
func (a *Authenticator) MetadataPaths(mcpPath string) []string {
	paths := []string{WellKnownPath}
	add := func(p string) {
		if s := suffixed(p); !slices.Contains(paths, s) {
			paths = append(paths, s)
		}
	}
	add(mcpPath)
	if u, err := url.Parse(a.opts.Audience); err == nil {
		add(u.Path)
	}
	return paths
}

// Metadata is the RFC 9728 protected resource metadata: resource = the
// audience, the issuer as the one authorization server, the required
// scopes, bearer tokens in the header only, and the resource name.
func (a *Authenticator) Metadata() *oauthex.ProtectedResourceMetadata {
	return &oauthex.ProtectedResourceMetadata{
		Resource:               a.opts.Audience,
		AuthorizationServers:   []string{a.opts.Issuer},
		ScopesSupported:        append([]string(nil), a.opts.RequiredScopes...),
		BearerMethodsSupported: []string{"header"},
		ResourceName:           a.opts.ResourceName,
	}
}

// MetadataHandler serves Metadata as JSON to GET (and CORS preflights:
// the metadata is public, RFC 9728 §3.1), with the go-sdk's handler.
func (a *Authenticator) MetadataHandler() http.Handler {
	return sdkauth.ProtectedResourceMetadataHandler(a.Metadata())
}

// Failure is why a request was not authenticated: the HTTP status (400,
// 401, 403 or 503), the RFC 6750 §3.1 error code ("" when no token was
// sent, else invalid_request, invalid_token or insufficient_scope) and a
// description naming what failed.
type Failure struct {
	Status      int
	Code        string
	Description string
	cause       error // logged, never sent (503)
}

func invalid(desc string) *Failure {
	return &Failure{Status: http.StatusUnauthorized, Code: "invalid_token", Description: desc}
}

// unavailable is a 503 whose description names what could not be reached
// (discovery or the JWKS) but not how: err, which may carry internal
// addresses, is only logged.
func unavailable(err error) *Failure {
	what := "its signing keys (JWKS) could not be fetched"
	if errors.Is(err, errDiscovery) {
		what = "OpenID Provider discovery failed"
	}
	return &Failure{Status: http.StatusServiceUnavailable, Description: "authorization server unavailable: " + what, cause: err}
}

// writeFailure answers f: a WWW-Authenticate Bearer challenge (RFC 6750
// §3, MCP authorization) with resource_metadata, the required scopes,
// and error/error_description when a token was sent; a JSON body
// {"error", "error_description"}. 503 gets Retry-After and no challenge.
// Every failure is counted (Options.Rejected).
func (a *Authenticator) writeFailure(w http.ResponseWriter, f *Failure) {
	a.opts.Rejected.WithLabelValues(f.reason()).Inc()
	if f.Status == http.StatusServiceUnavailable {
		a.opts.Logger.Warn("auth: cannot validate tokens", "error", f.Description, "cause", f.cause)
		w.Header().Set("Retry-After", "5")
		writeJSON(w, f.Status, map[string]string{"error": "temporarily_unavailable", "error_description": f.Description})
		return
	}
	params := []string{"resource_metadata=" + quote(a.metadataURL)}
	if len(a.opts.RequiredScopes) > 0 {
		params = append(params, "scope="+quote(strings.Join(a.opts.RequiredScopes, " ")))
	}
	if f.Code != "" {
		params = append(params, "error="+quote(f.Code), "error_description="+quote(f.Description))
	}
	w.Header().Set("WWW-Authenticate", "Bearer "+strings.Join(params, ", "))
	code := f.Code
	if code == "" {
		code = "unauthorized"
	}
	writeJSON(w, f.Status, map[string]string{"error": code, "error_description": f.Description})
}

// quote is an RFC 6750 §3 quoted value: the characters it forbids
// (outside %x20-7E, '"' and '\\') become '?'.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r < 0x20 || r > 0x7e || r == '"' || r == '\\':
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
