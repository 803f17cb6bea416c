package config

import (
	"fmt"
	"net"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Limits enforced by validation.
const (
	maxPageSize     = 10000
	minMaxBodyBytes = 1024
	minStateKeyLen  = 32
)

var backendNameRE = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

// keyPrefixRE is what cluster.key_prefix may contain (braces allow a Redis
// Cluster hash tag).
var keyPrefixRE = regexp.MustCompile(`^[A-Za-z0-9_.:{}-]{1,64}$`)

// checkExplicit checks the numeric settings the file sets explicitly. It runs
// before ApplyDefaults, so an explicit 0 is reported rather than replaced.
func checkExplicit(ps *problems, c *Config) {
	ix := ps.ix
	positive := func(key string, d Duration) {
		if ix.set(key) && d <= 0 {
			ps.add(key, fmt.Sprintf("must be a positive duration, got %s", time.Duration(d)))
		}
	}
	atLeast := func(key string, v, lo int64) {
		if ix.set(key) && v < lo {
			ps.add(key, fmt.Sprintf("must be at least %d, got %d", lo, v))
		}
	}
	for i, b := range c.Backends {
		positive(joinIndex("backends", i)+".timeout", b.Timeout)
		atLeast(joinIndex("backends", i)+".max_processes", int64(b.MaxProcesses), 0)
	}
	if p := c.Pagination.PageSize; ix.set("pagination.page_size") && (p < 1 || p > maxPageSize) {
		ps.add("pagination.page_size", fmt.Sprintf("must be between 1 and %d, got %d", maxPageSize, p))
	}
	atLeast("sessions.max", int64(c.Sessions.Max), 1)
	atLeast("sessions.max_per_principal", int64(c.Sessions.MaxPerPrincipal), 1)
	if a := c.Auth; a != nil {
		positive("auth.leeway", a.Leeway)
		positive("auth.jwks_refresh_interval", a.JWKSRefreshInterval)
	}
	positive("sessions.idle_timeout", c.Sessions.IdleTimeout)
	atLeast("http.max_body_bytes", c.HTTP.MaxBodyBytes, minMaxBodyBytes)
	positive("http.shutdown_timeout", c.HTTP.ShutdownTimeout)
	positive("http.read_header_timeout", c.HTTP.ReadHeaderTimeout)
	positive("http.read_body_timeout", c.HTTP.ReadBodyTimeout)
	positive("http.idle_timeout", c.HTTP.IdleTimeout)
	positive("mrtr.park_timeout", c.MRTR.ParkTimeout)
	atLeast("mrtr.max_parked", int64(c.MRTR.MaxParked), 1)
	atLeast("mrtr.max_parked_per_principal", int64(c.MRTR.MaxParkedPerPrincipal), 1)
	atLeast("cluster.max_events_per_session", int64(c.Cluster.MaxEventsPerSession), 1)
	checkRateLimitsExplicit(ps, c)
}

// validate checks everything else, on the config with defaults applied.
func validate(ps *problems, c *Config) {
	if _, port, err := net.SplitHostPort(c.Listen); err != nil || !validPort(port) {
		ps.add("listen", fmt.Sprintf("want HOST:PORT, got %q", c.Listen))
	}
	if !strings.HasPrefix(c.Path, "/") {
		ps.add("path", fmt.Sprintf("must start with \"/\", got %q", c.Path))
	}
	validateHTTP(ps, c)
	names := validateBackends(ps, c.Backends)
	if c.Sessions.Max >= 1 && c.Sessions.MaxPerPrincipal > c.Sessions.Max {
		ps.add("sessions.max_per_principal", fmt.Sprintf("must not exceed sessions.max (%d), got %d", c.Sessions.Max, c.Sessions.MaxPerPrincipal))
	}
	validateAuth(ps, c)
	validateOutbound(ps, c)
	validateAuthorization(ps, c, names)
	validateTelemetry(ps, c)
	validateToolSearch(ps, c)
	validateAudit(ps, c)
	validateSecurity(ps, c, names)
	validateRateLimits(ps, c, names)
	validateAggregation(ps, &c.Aggregation, names)
	if k := c.MRTR.StateKey; k != "" && len(k) < minStateKeyLen {
		ps.add("mrtr.state_key", fmt.Sprintf("must be at least %d bytes after ${VAR} expansion, got %d", minStateKeyLen, len(k)))
	}
	validateCluster(ps, c)
}

// validateHTTP checks the front endpoint's origins, hosts and the metrics
// listener.
func validateHTTP(ps *problems, c *Config) {
	for i, o := range c.HTTP.AllowedOrigins {
		if u, err := url.Parse(o); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
			ps.add(joinIndex("http.allowed_origins", i), fmt.Sprintf("invalid origin %q: want scheme://host[:port], for example https://app.example.com", o))
		}
	}
	for i, h := range c.HTTP.AllowedHosts {
		if !validHost(h) {
			ps.add(joinIndex("http.allowed_hosts", i), fmt.Sprintf("invalid host %q: want a host name or IP, optionally with :port", h))
		}
	}
	if m := c.HTTP.MetricsListen; m != "" {
		if _, port, err := net.SplitHostPort(m); err != nil || !validPort(port) {
			ps.add("http.metrics_listen", fmt.Sprintf("want HOST:PORT, got %q", m))
		} else if m == c.Listen && port != "0" {
			ps.add("http.metrics_listen", fmt.Sprintf("must differ from listen (%s)", c.Listen))
		}
	}
}

// hostRE is what one http.allowed_hosts entry may be: a DNS name or IPv4
// address, or a bracketed IPv6 address, with an optional port.
var hostRE = regexp.MustCompile(`^([A-Za-z0-9]([A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(:[0-9]{1,5})?$`)

func validHost(h string) bool {
	if !hostRE.MatchString(h) {
		return false
	}
	if _, port, err := net.SplitHostPort(h); err == nil {
		return validPort(port)
	}
	return true
}

// validateBackends checks each backend and returns the set of names seen,
// or nil when a name (or the list) was malformed and so is unknown:
// references to backends are then not checked, rather than reported as
// unknown because of the first problem.
func validateBackends(ps *problems, bs []Backend) map[string]bool {
	names := map[string]bool{}
	if len(bs) == 0 {
		ps.add("backends", "at least one backend is required")
	}
	for i, b := range bs {
		p := joinIndex("backends", i)
		switch {
		case b.Name == "":
			ps.add(p+".name", "required")
		case names[b.Name]:
			ps.add(p+".name", fmt.Sprintf("duplicate backend name %q", b.Name))
		case !backendNameRE.MatchString(b.Name):
			ps.add(p+".name", fmt.Sprintf("invalid backend name %q: want lower-case letters, digits, _ and -, starting with a letter or digit", b.Name))
		}
		if b.Name != "" {
			names[b.Name] = true
		}
		validateBackend(ps, p, b)
	}
	if !namesKnown(ps.ix, len(bs)) {
		return nil
	}
	return names
}

// validateBackend checks backend b (at key path p) apart from its name:
// url or command, transport, the stdio-only keys and forward_headers.
func validateBackend(ps *problems, p string, b Backend) {
	switch {
	case b.URL == "" && b.Command == "" && !ps.ix.isBad(p+".url") && !ps.ix.isBad(p+".command"):
		ps.add(p, "backend needs url or command")
	case b.URL != "" && b.Command != "":
		ps.add(p+".command", "backend has both url and command; set exactly one")
	case b.URL != "" && !isHTTPURL(b.URL):
		ps.add(p+".url", fmt.Sprintf("invalid URL %q: want an absolute http or https URL", raw(ps, p+".url", b.URL)))
	}
	checkStdioKeys(ps, p, b)
	checkForward(ps, p+".forward_headers", b.ForwardHeaders)
	checkTransport(ps, p, b)
}

// checkStdioKeys refuses max_processes and isolation on a backend that is
// not stdio, and an unknown isolation.
func checkStdioKeys(ps *problems, p string, b Backend) {
	if b.MaxProcesses != 0 && b.Transport != TransportStdio {
		ps.add(p+".max_processes", "max_processes applies only to stdio backends")
	}
	switch {
	case b.Isolation != "" && b.Transport != TransportStdio:
		ps.add(p+".isolation", "isolation applies only to stdio backends")
	case b.Isolation != "" && b.Isolation != IsolationSession && b.Isolation != IsolationShared:
		ps.add(p+".isolation", fmt.Sprintf("unknown isolation %q: want session or shared", b.Isolation))
	}
}

// checkTransport checks that b's transport is known and fits its url or
// command.
func checkTransport(ps *problems, p string, b Backend) {
	switch b.Transport {
	case TransportStdio:
		if b.Command == "" && b.URL != "" {
			ps.add(p+".transport", "transport stdio requires command, not url")
		}
	case TransportStreamableHTTP, TransportSSE:
		if b.URL == "" && b.Command != "" {
			ps.add(p+".transport", fmt.Sprintf("transport %s requires url, not command", b.Transport))
		}
	case "": // neither url nor command; reported above
	default:
		ps.add(p+".transport", fmt.Sprintf("unknown transport %q: want streamable-http, sse or stdio", b.Transport))
	}
}

// namesKnown reports whether the n backends' names were all decoded: no
// name, backend or the list itself was malformed.
func namesKnown(ix *index, n int) bool {
	if ix.isBad("backends") {
		return false
	}
	for i := range n {
		if ix.isBad(joinIndex("backends", i) + ".name") {
			return false
		}
	}
	return true
}

// validateAggregation checks the strategy, prefix format, priority and
// overrides; names nil (unknown) skips the checks that backends exist.
func validateAggregation(ps *problems, a *Aggregation, names map[string]bool) {
	switch a.ConflictResolution {
	case StrategyPrefix, StrategyPriority, StrategyManual:
	default:
		ps.add("aggregation.conflict_resolution", fmt.Sprintf("unknown strategy %q: want prefix, priority or manual", a.ConflictResolution))
	}
	if !strings.Contains(a.PrefixFormat, "{backend}") || !strings.Contains(a.PrefixFormat, "{name}") {
		ps.add("aggregation.prefix_format", fmt.Sprintf("must contain both {backend} and {name}, got %q", a.PrefixFormat))
	}
	for i, n := range a.Priority {
		p := joinIndex("aggregation.priority", i)
		switch {
		case names != nil && !names[n]:
			ps.add(p, fmt.Sprintf("unknown backend %q", n))
		case slices.Contains(a.Priority[:i], n):
			ps.add(p, fmt.Sprintf("duplicate backend %q", n))
		}
	}
	for _, bn := range sortedKeys(a.Overrides) {
		p := joinKey("aggregation.overrides", bn)
		if names != nil && !names[bn] {
			ps.add(p, fmt.Sprintf("unknown backend %q", bn))
		}
		bo := a.Overrides[bn]
		checkOverrides(ps, joinKey(p, "tools"), bo.Tools)
		checkOverrides(ps, joinKey(p, "prompts"), bo.Prompts)
	}
}

func checkOverrides(ps *problems, path string, m map[string]Override) {
	for _, k := range sortedKeys(m) {
		if o := m[k]; o.Name == "" && o.Description == "" {
			ps.add(joinKey(path, k), "override needs a name or a description")
		}
	}
}

// transportHeaders are header names the transport to a backend sets
// itself: forwarding a client's would break or hijack the backend session.
var transportHeaders = []string{"accept", "connection", "content-length", "content-type", "host", "last-event-id", "transfer-encoding"}

// checkForward refuses forward_headers names that are not HTTP header
// names, or that the transport owns (those above, Mcp-* and Vmcp-*).
func checkForward(ps *problems, path string, names []string) {
	for i, n := range names {
		l := strings.ToLower(n)
		switch {
		case !headerNameRE.MatchString(n):
			ps.add(joinIndex(path, i), fmt.Sprintf("invalid header name %q", n))
		case slices.Contains(credentialHeaders, l):
			ps.add(joinIndex(path, i), fmt.Sprintf(passthroughRule, n))
		case strings.HasPrefix(l, "mcp-") || strings.HasPrefix(l, "vmcp-") || slices.Contains(transportHeaders, l):
			ps.add(joinIndex(path, i), fmt.Sprintf("%s is set by vmcp's transport to the backend and cannot be forwarded", n))
		}
	}
}

// headerNameRE is an HTTP field name (RFC 9110 token).
var headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// raw returns the text written at key before ${VAR} expansion (so problems
// do not echo secrets), or v when the key was not written.
func raw(ps *problems, key, v string) string {
	if s := ps.ix.value(key); s != "" {
		return s
	}
	return v
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func validPort(p string) bool {
	n, err := strconv.Atoi(p)
	return err == nil && n >= 0 && n <= 65535
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
