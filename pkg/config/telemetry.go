package config

import (
	"fmt"
	"net/url"
	"strings"
)

// Telemetry configures what vmcp reports about itself besides the
// Prometheus metrics at /metrics (always on).
type Telemetry struct {
	Tracing Tracing `yaml:"tracing"`
}

// Tracing configures OpenTelemetry tracing: a span per client request and
// a child span per backend request, exported over OTLP. Off by default.
// Each unset key falls back to the standard OTEL_* environment variable
// named below, then to the built-in default.
type Tracing struct {
	// Enabled turns tracing on; so does OTEL_TRACES_EXPORTER=otlp, and
	// OTEL_SDK_DISABLED=true turns it off. Default off.
	Enabled bool `yaml:"enabled"`
	// Endpoint is the OTLP collector URL (http://host:4318 for
	// http/protobuf, which gets /v1/traces when it has no path;
	// http://host:4317 for grpc; http:// means no TLS).
	// Empty: the exporter reads OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
	// OTEL_EXPORTER_OTLP_ENDPOINT, else uses localhost.
	Endpoint string `yaml:"endpoint"`
	// Protocol is "http/protobuf" or "grpc"; default
	// OTEL_EXPORTER_OTLP_TRACES_PROTOCOL, OTEL_EXPORTER_OTLP_PROTOCOL, else
	// http/protobuf.
	Protocol string `yaml:"protocol"`
	// SampleRatio is the share of new traces sampled, 0 to 1 (a request
	// whose client sent a sampled traceparent is always sampled); default 1.
	SampleRatio *float64 `yaml:"sample_ratio"`
	// ServiceName is the service.name resource attribute; default
	// OTEL_SERVICE_NAME, else name.
	ServiceName string `yaml:"service_name"`
}

// Tracing protocols (OTEL_EXPORTER_OTLP_PROTOCOL values vmcp exports with).
const (
	ProtocolHTTPProtobuf = "http/protobuf"
	ProtocolGRPC         = "grpc"
)

// applyTracingDefaults fills the tracing keys the file leaves unset from
// getenv (the standard OTEL_* variables), then from the defaults.
func (c *Config) applyTracingDefaults(getenv func(string) string) {
	t := &c.Telemetry.Tracing
	if !t.Enabled && getenv("OTEL_TRACES_EXPORTER") == "otlp" {
		t.Enabled = true
	}
	if strings.EqualFold(getenv("OTEL_SDK_DISABLED"), "true") {
		t.Enabled = false
	}
	setString(&t.Protocol, getenv("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"))
	setString(&t.Protocol, getenv("OTEL_EXPORTER_OTLP_PROTOCOL"))
	setString(&t.Protocol, ProtocolHTTPProtobuf)
	setString(&t.ServiceName, getenv("OTEL_SERVICE_NAME"))
	setString(&t.ServiceName, c.Name)
	if t.SampleRatio == nil {
		one := 1.0
		t.SampleRatio = &one
	}
}

// validateTelemetry checks the tracing keys: a known protocol, an
// absolute http(s) endpoint URL without query, a ratio within [0, 1].
func validateTelemetry(ps *problems, c *Config) {
	t := c.Telemetry.Tracing
	if t.Protocol != ProtocolHTTPProtobuf && t.Protocol != ProtocolGRPC {
		ps.add("telemetry.tracing.protocol", fmt.Sprintf("want %q or %q, got %q (from the file or OTEL_EXPORTER_OTLP_PROTOCOL)",
			ProtocolHTTPProtobuf, ProtocolGRPC, t.Protocol))
	}
	if e := t.Endpoint; e != "" {
		if u, err := url.Parse(e); err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") || u.RawQuery != "" {
			ps.add("telemetry.tracing.endpoint", fmt.Sprintf("invalid URL %q: want an absolute http or https URL without query", e))
		}
	}
	if r := t.SampleRatio; r != nil && (*r < 0 || *r > 1) {
		ps.add("telemetry.tracing.sample_ratio", fmt.Sprintf("must be between 0 and 1, got %g", *r))
	}
}
