// Package config holds vmcp's YAML configuration: its shape, defaults and
// validation. Load reports every problem with the key and line it concerns.
// ParseFile also reads the MCP server lists clients keep (Claude Desktop /
// Cursor "mcpServers" JSON, VS Code "servers" JSON), recognised by content
// and converted into the same Config before the same defaults and
// validation (import.go); File.YAML prints such a file as vmcp's YAML.
package config

import (
	"fmt"
	"net"
	"time"
)

// Config is the whole vmcp configuration file.
type Config struct {
	Listen       string      `yaml:"listen"`       // HOST:PORT; default 127.0.0.1:8080
	Path         string      `yaml:"path"`         // MCP endpoint path; default /mcp
	Name         string      `yaml:"name"`         // serverInfo.name; default vmcp
	Instructions string      `yaml:"instructions"` // initialize / server/discover instructions
	Backends     []Backend   `yaml:"backends"`
	Aggregation  Aggregation `yaml:"aggregation"`
	Pagination   Pagination  `yaml:"pagination"`
	Sessions     Sessions    `yaml:"sessions"`
	HTTP         HTTP        `yaml:"http"`
	MRTR         MRTR        `yaml:"mrtr"`
	Cluster      Cluster     `yaml:"cluster"`
	// Auth makes vmcp an OAuth 2.1 resource server (MCP authorization):
	// every request to the MCP endpoint needs a bearer access token. nil
	// (no auth key): no inbound authentication.
	Auth *Auth `yaml:"auth,omitempty"`
	// Authorization is the per-principal access policy: which tools,
	// prompts and resources each principal may see and use (authz.go).
	// nil (no authorization key): every principal sees and uses everything.
	Authorization *Authorization `yaml:"authorization,omitempty"`
	// Telemetry configures OpenTelemetry tracing (telemetry.go).
	Telemetry Telemetry `yaml:"telemetry"`
	// ToolSearch is vmcp's built-in tool search (toolsearch.go).
	ToolSearch ToolSearch `yaml:"tool_search"`
	// Audit configures the audit log (audit.go); nil: none.
	Audit *Audit `yaml:"audit,omitempty"`
	// Security configures tool-definition pinning (security.go).
	Security Security `yaml:"security"`
	// RateLimits is the ordered rate limit rule list (ratelimit.go); empty:
	// no limits.
	RateLimits []RateLimit `yaml:"rate_limits,omitempty"`
}

// Auth configures inbound authentication: JWT access tokens issued by one
// OpenID Provider for one audience (RFC 8707 resource), validated against
// the issuer's JWKS (RFC 9068 style; RFC 6750 bearer header only).
type Auth struct {
	Issuer         string   `yaml:"issuer"`          // required; discovery (/.well-known/openid-configuration) and JWKS from it
	Audience       string   `yaml:"audience"`        // required aud of every token; vmcp's canonical URL, e.g. https://vmcp.example.com/mcp
	JWKSURL        string   `yaml:"jwks_url"`        // optional: overrides the discovered jwks_uri
	RequiredScopes []string `yaml:"required_scopes"` // every token must carry all of these (scope or scp claim)
	ResourceName   string   `yaml:"resource_name"`   // resource_name in the protected resource metadata; default: name
	Leeway         Duration `yaml:"leeway"`          // clock skew allowed on exp and nbf; default 30s
	// JWKSRefreshInterval bounds how often a token with an unknown key
	// (kid) refetches the JWKS (key rotation); default 1m.
	JWKSRefreshInterval Duration `yaml:"jwks_refresh_interval"`
}

// Backend is one MCP server behind vmcp. Exactly one of URL or Command is set.
type Backend struct {
	Name      string            `yaml:"name"`      // required, unique, [a-z0-9][a-z0-9_-]*
	URL       string            `yaml:"url"`       // streamable-http or sse endpoint
	Transport string            `yaml:"transport"` // streamable-http (default with url) | sse | stdio (default with command)
	Headers   map[string]string `yaml:"headers"`   // static outbound headers; ${VAR} expanded from the environment
	Timeout   Duration          `yaml:"timeout"`   // per request to this backend; default 30s
	Command   string            `yaml:"command"`   // stdio executable
	Args      []string          `yaml:"args"`
	Env       map[string]string `yaml:"env"` // ${VAR} expanded
	// ForwardHeaders lists inbound client headers copied to this backend.
	// Empty by default: nothing is forwarded; never Authorization or Cookie.
	ForwardHeaders []string `yaml:"forward_headers"`
	// Auth is the backend's own credential (outbound.go); nil: none.
	Auth *OutboundAuth `yaml:"auth"`
	// MaxProcesses bounds a stdio backend's live processes opened for
	// client sessions (the control connection's own process not counted);
	// beyond it a client's first use of the backend fails with an error
	// naming the limit. 0, the default, means no limit.
	MaxProcesses int `yaml:"max_processes"`
	// Isolation of a stdio backend: "session" (default) runs one process per
	// Legacy client session; "shared" runs one process for every client
	// (the control connection's), and refuses what cannot be attributed to
	// one client over it (server-to-client requests, logs, progress).
	Isolation string `yaml:"isolation"`
	// Description says what the backend offers, in the operator's words:
	// tool search indexes it with each of the backend's tools (in place of
	// the description the backend gives in its initialize result).
	Description string `yaml:"description"`
}

// Isolation values of Backend.Isolation.
const (
	IsolationSession = "session"
	IsolationShared  = "shared"
)

// Transport names accepted in Backend.Transport.
const (
	TransportStreamableHTTP = "streamable-http"
	TransportSSE            = "sse"
	TransportStdio          = "stdio"
)

// Aggregation configures how the backends' lists are merged.
type Aggregation struct {
	ConflictResolution string                      `yaml:"conflict_resolution"` // prefix (default) | priority | manual
	PrefixFormat       string                      `yaml:"prefix_format"`       // default "{backend}_{name}"
	Priority           []string                    `yaml:"priority"`            // backend names, first wins
	Overrides          map[string]BackendOverrides `yaml:"overrides"`           // backend name -> overrides
}

// Conflict resolution strategies (Aggregation.ConflictResolution).
const (
	StrategyPrefix   = "prefix"
	StrategyPriority = "priority"
	StrategyManual   = "manual"
)

// BackendOverrides renames or redescribes one backend's tools and prompts,
// keyed by the backend's original name.
type BackendOverrides struct {
	Tools   map[string]Override `yaml:"tools"`
	Prompts map[string]Override `yaml:"prompts"`
}

// Override is the advertised name and/or description of one tool or prompt.
type Override struct {
	Name        string `yaml:"name"`
	Description string `yaml:"description"`
}

// Pagination configures list paging for both revisions.
type Pagination struct {
	PageSize int `yaml:"page_size"` // default 1000 (mcp.DefaultPageSize)
}

// Sessions bounds Legacy client sessions.
type Sessions struct {
	IdleTimeout Duration `yaml:"idle_timeout"` // default 30m
	Max         int      `yaml:"max"`          // default 10000
	// MaxPerPrincipal bounds the sessions one authenticated principal
	// (token iss+sub) may hold on one node; default max/10, at least 1.
	// Without auth every client is anonymous and only Max applies.
	MaxPerPrincipal int `yaml:"max_per_principal"`
}

// HTTP configures the front endpoint and its listeners.
type HTTP struct {
	MaxBodyBytes int64 `yaml:"max_body_bytes"` // default 4 MiB; larger bodies get 413
	// AllowedOrigins are the browser Origins (scheme://host[:port]) accepted
	// besides same-host ones; CORS is answered for them. Default none.
	AllowedOrigins []string `yaml:"allowed_origins"`
	// AllowedHosts are Host names (optionally host:port) accepted besides
	// loopback names on a loopback connection (DNS-rebinding guard); default none.
	AllowedHosts      []string `yaml:"allowed_hosts"`
	ShutdownTimeout   Duration `yaml:"shutdown_timeout"`    // bound on finishing in-flight calls; default 10s
	ReadHeaderTimeout Duration `yaml:"read_header_timeout"` // request line and headers must arrive within; default 10s
	ReadBodyTimeout   Duration `yaml:"read_body_timeout"`   // a request body must arrive within (408 beyond); default 30s
	IdleTimeout       Duration `yaml:"idle_timeout"`        // an idle keep-alive connection closes after; default 2m
	// MetricsListen is an optional HOST:PORT serving /metrics on its own;
	// when set, the main listener does not serve /metrics.
	MetricsListen string `yaml:"metrics_listen"`
}

// MRTR configures multi round-trip requests (2026-07-28 input_required).
type MRTR struct {
	// StateKey is the HMAC key (at least 32 bytes, ${VAR} expanded) that
	// protects requestState and cursors vmcp mints; generated at start if empty.
	StateKey    string   `yaml:"state_key"`
	ParkTimeout Duration `yaml:"park_timeout"` // parked backend call lifetime; default 5m
	// MaxParked bounds the calls parked on this node at once (each holds a
	// backend session); beyond it a call is refused naming the limit.
	// Default 1000.
	MaxParked int `yaml:"max_parked"`
	// MaxParkedPerPrincipal bounds one authenticated principal's parked
	// calls (default a tenth of max_parked). Without auth only MaxParked applies.
	MaxParkedPerPrincipal int `yaml:"max_parked_per_principal"`
}

// Cluster configures multi-node operation on Redis: at most one of
// RedisURL, RedisCluster and RedisSentinel (none: single node, in memory).
type Cluster struct {
	RedisURL      string         `yaml:"redis_url"`                // one Redis: redis:// or rediss://
	RedisCluster  []string       `yaml:"redis_cluster,omitempty"`  // Redis Cluster seed nodes, host:port
	RedisSentinel *RedisSentinel `yaml:"redis_sentinel,omitempty"` // a Sentinel-managed primary
	RedisUsername string         `yaml:"redis_username"`           // ACL user for the Redis servers (replaces a URL's)
	RedisPassword string         `yaml:"redis_password"`           // ${VAR} expanded; replaces a URL's
	RedisTLS      bool           `yaml:"redis_tls"`                // TLS to the Redis servers (rediss:// implies it)
	// RedisTLSCAFile is a PEM file of the CAs that sign the Redis servers'
	// certificates (implies redis_tls; default: the system's roots).
	RedisTLSCAFile string `yaml:"redis_tls_ca_file"`

	NodeID              string `yaml:"node_id"`                // default: generated at start
	AdvertiseURL        string `yaml:"advertise_url"`          // how other nodes reach this one
	MaxEventsPerSession int    `yaml:"max_events_per_session"` // default 1000
	// KeyPrefix starts every Redis key vmcp writes (default "vmcp:"), so
	// several clusters or tests can share one Redis.
	KeyPrefix string `yaml:"key_prefix"`
}

// RedisSentinel names a primary managed by Redis Sentinel.
type RedisSentinel struct {
	Master string   `yaml:"master"` // the primary's name in the sentinels' configuration
	Addrs  []string `yaml:"addrs"`  // sentinels, host:port
	// Username and Password authenticate to the sentinels (their
	// requirepass / ACL user), not to the Redis servers; ${VAR} expanded.
	Username string `yaml:"username"`
	Password string `yaml:"password"`
}

// UsesRedis reports whether c names a Redis (any of the three forms).
func (c Cluster) UsesRedis() bool {
	return c.RedisURL != "" || len(c.RedisCluster) > 0 || c.RedisSentinel != nil
}

// Duration is a time.Duration written in YAML as a Go duration string ("30s").
type Duration time.Duration

// D returns d as a time.Duration.
func (d Duration) D() time.Duration { return time.Duration(d) }

// AdvertiseFromListen is the advertise URL (http://host:port) implied by a
// listen address with a concrete host and port; a wildcard or empty host,
// or port 0, does not say how other nodes reach this one: an error naming
// cluster.advertise_url.
func AdvertiseFromListen(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); err != nil || host == "" || port == "0" || (ip != nil && ip.IsUnspecified()) {
		return "", fmt.Errorf("cluster.advertise_url is required: listen %q does not say how other nodes reach this one", listen)
	}
	return "http://" + net.JoinHostPort(host, port), nil
}
