package config

import (
	"os"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Defaults that packages also apply to a zero option (components built
// without a config, as in their own tests).
const (
	DefaultBackendTimeout = 30 * time.Second // backends[].timeout
	DefaultMaxBodyBytes   = 4 << 20          // http.max_body_bytes
	DefaultParkTimeout    = 5 * time.Minute  // mrtr.park_timeout
	DefaultMaxParked      = 1000             // mrtr.max_parked
)

// Defaults filled in by ApplyDefaults.
const (
	defaultListen              = "127.0.0.1:8080"
	defaultPath                = "/mcp"
	defaultName                = "vmcp"
	defaultBackendTimeout      = DefaultBackendTimeout
	defaultPrefixFormat        = "{backend}_{name}"
	defaultIdleTimeout         = 30 * time.Minute
	defaultMaxSessions         = 10000
	defaultMaxBodyBytes        = DefaultMaxBodyBytes
	defaultShutdownTimeout     = 10 * time.Second
	defaultReadHeaderTimeout   = 10 * time.Second
	defaultReadBodyTimeout     = 30 * time.Second
	defaultHTTPIdleTimeout     = 2 * time.Minute
	defaultParkTimeout         = DefaultParkTimeout
	defaultMaxEventsPerSession = 1000
	defaultKeyPrefix           = "vmcp:"
	defaultAuthLeeway          = 30 * time.Second
	defaultJWKSRefresh         = time.Minute
)

// ApplyDefaults fills every zero-valued field that has a default (see the
// field comments): listen, path, name, backend transport, timeout and
// (stdio) isolation,
// aggregation strategy and prefix format, page size, session, HTTP, MRTR
// cluster limits, auth timings and the tracing keys (from the OTEL_*
// environment variables first, see Tracing). Fields already set are kept.
func (c *Config) ApplyDefaults() {
	setString(&c.Listen, defaultListen)
	setString(&c.Path, defaultPath)
	setString(&c.Name, defaultName)
	for i := range c.Backends {
		b := &c.Backends[i]
		if b.Transport == "" {
			switch {
			case b.URL != "":
				b.Transport = TransportStreamableHTTP
			case b.Command != "":
				b.Transport = TransportStdio
			}
		}
		setDuration(&b.Timeout, defaultBackendTimeout)
		if b.Transport == TransportStdio {
			setString(&b.Isolation, IsolationSession)
		}
	}
	setString(&c.Aggregation.ConflictResolution, StrategyPrefix)
	setString(&c.Aggregation.PrefixFormat, defaultPrefixFormat)
	setInt(&c.Pagination.PageSize, mcp.DefaultPageSize)
	setDuration(&c.Sessions.IdleTimeout, defaultIdleTimeout)
	setInt(&c.Sessions.Max, defaultMaxSessions)
	setInt(&c.Sessions.MaxPerPrincipal, max(c.Sessions.Max/10, 1))
	if c.HTTP.MaxBodyBytes == 0 {
		c.HTTP.MaxBodyBytes = defaultMaxBodyBytes
	}
	setDuration(&c.HTTP.ShutdownTimeout, defaultShutdownTimeout)
	setDuration(&c.HTTP.ReadHeaderTimeout, defaultReadHeaderTimeout)
	setDuration(&c.HTTP.ReadBodyTimeout, defaultReadBodyTimeout)
	setDuration(&c.HTTP.IdleTimeout, defaultHTTPIdleTimeout)
	setDuration(&c.MRTR.ParkTimeout, defaultParkTimeout)
	setInt(&c.MRTR.MaxParked, DefaultMaxParked)
	setInt(&c.MRTR.MaxParkedPerPrincipal, max(c.MRTR.MaxParked/10, 1))
	setInt(&c.Cluster.MaxEventsPerSession, defaultMaxEventsPerSession)
	setString(&c.Cluster.KeyPrefix, defaultKeyPrefix)
	if a := c.Auth; a != nil {
		setString(&a.ResourceName, c.Name)
		setDuration(&a.Leeway, defaultAuthLeeway)
		setDuration(&a.JWKSRefreshInterval, defaultJWKSRefresh)
	}
	c.applyTracingDefaults(os.Getenv)
	c.applyToolSearchDefaults()
	c.applyAuditDefaults()
	c.applySecurityDefaults()
	c.applyRateLimitDefaults()
}

func setString(p *string, v string) {
	if *p == "" {
		*p = v
	}
}

func setInt(p *int, v int) {
	if *p == 0 {
		*p = v
	}
}

func setDuration(p *Duration, v time.Duration) {
	if *p == 0 {
		*p = Duration(v)
	}
}
