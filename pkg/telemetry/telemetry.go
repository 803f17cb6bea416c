// Package telemetry holds vmcp's Prometheus metrics: one Metrics per
// server, each with its own registry (so servers in one process, as in
// tests, never share series): client requests at the endpoint, backend
// requests in the call core, gauges read from live state when scraped
// (Observe), reloads. Every message vmcp cannot deliver is counted here as
// well as logged. The README's Telemetry section lists every metric.
package telemetry

import (
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Metrics are one server's metrics and the registry that serves them.
type Metrics struct {
	// Registry holds every metric below plus the Go and process collectors.
	Registry *prometheus.Registry

	// Requests counts client requests at the MCP endpoint, by JSON-RPC
	// method (MethodLabel; "GET"/"DELETE"/"POST" when the request carried
	// none vmcp read), client revision (legacy|modern) and outcome
	// (ok|error|cancelled: the client cancelled or left first, not an error).
	Requests *prometheus.CounterVec
	// RequestLatency observes each client request's duration at the
	// endpoint in seconds (for streams: until the stream ends), by method
	// and revision.
	RequestLatency *prometheus.HistogramVec
	// ConfigReloads counts configuration reloads, by outcome (ok; invalid:
	// rejected, the running config kept; partial: keys that cannot change
	// live were left as they were).
	ConfigReloads *prometheus.CounterVec

	// Undeliverable counts server-to-client messages that could not be
	// delivered, by JSON-RPC method (for example notifications/progress).
	Undeliverable *prometheus.CounterVec
	// ProgressDropped counts backend progress notifications dropped
	// because no call sent their token or their call had ended, by backend
	// and reason (unknown_token|after_end); they are also Undeliverable.
	ProgressDropped *prometheus.CounterVec
	// Undelivered counts those two and logs them at a bounded rate.
	Undelivered *Undelivered
	// Throttled writes the log lines a client can repeat at will (refused
	// initializes, requests on another principal's session) at most once
	// per second per kind, with the count withheld (throttled.go).
	Throttled *Throttled
	// BackendRequests counts requests sent to backends on a client's
	// behalf, by backend, method, client revision (legacy|modern) and
	// outcome (ok|error|cancelled: the client cancelled, left or ended its
	// session before the answer; not a backend failure).
	BackendRequests *prometheus.CounterVec
	// BackendErrors counts the failed ones (outcome error, never
	// cancelled), by backend, method and client revision.
	BackendErrors *prometheus.CounterVec
	// BackendLatency observes each backend request's duration in seconds,
	// by backend and method.
	BackendLatency *prometheus.HistogramVec
	// Relayed counts Legacy client requests relayed as raw JSON-RPC on the
	// client's backend session, by method.
	Relayed *prometheus.CounterVec
	// EventsNotStored counts session events that could not be written to
	// the cluster event store (a Last-Event-ID resume cannot replay them;
	// the live stream still carried them).
	EventsNotStored prometheus.Counter
	// GetStreamReconnects counts backend standalone GET streams reopened
	// after they ended, by backend.
	GetStreamReconnects *prometheus.CounterVec
	// GetStreamAbandoned counts backend GET streams no longer reopened
	// (405, 404 or too many failed attempts), by backend.
	GetStreamAbandoned *prometheus.CounterVec
	// StdioSkippedLines counts stdout lines of stdio backends that were not
	// JSON-RPC and were skipped, by backend.
	StdioSkippedLines *prometheus.CounterVec
	// AuthRejected counts MCP endpoint requests refused by authentication,
	// by reason (no_token, invalid_request, invalid_token,
	// insufficient_scope, unavailable).
	AuthRejected *prometheus.CounterVec
	// SessionForbidden counts Legacy session requests refused (403)
	// because another principal created the session, by HTTP method.
	SessionForbidden *prometheus.CounterVec
	// OutboundTokens counts requests for backends' own tokens (outbound.go).
	OutboundTokens *prometheus.CounterVec
}

// New returns a fresh set of metrics on a registry of its own.
func New() *Metrics {
	m := &Metrics{
		Registry: prometheus.NewRegistry(),
		Requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmcp_requests_total",
			Help: "Client requests at the MCP endpoint, by method, client revision and outcome.",
		}, []string{"method", "revision", "outcome"}),
		RequestLatency: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "vmcp_request_duration_seconds",
			Help:    "Duration of client requests at the MCP endpoint in seconds, by method and client revision.",
			Buckets: latencyBuckets,
		}, []string{"method", "revision"}),
		ConfigReloads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmcp_config_reloads_total",
			Help: "Configuration reloads, by outcome.",
		}, []string{"outcome"}),
		Undeliverable: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmcp_undeliverable_messages_total",
			Help: "Server-to-client messages vmcp could not deliver, by method.",
		}, []string{"method"}),
		Relayed: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmcp_relayed_requests_total",
			Help: "Legacy client requests relayed as raw JSON-RPC to a backend session, by method.",
		}, []string{"method"}),
		EventsNotStored: prometheus.NewCounter(prometheus.CounterOpts{
			Name: "vmcp_session_events_not_stored_total",
			Help: "Session events that could not be written to the cluster event store.",
		}),
		AuthRejected: NewAuthRejected(),
		SessionForbidden: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmcp_session_principal_mismatch_total",
			Help: "Legacy session requests refused because another principal created the session, by method.",
		}, []string{"method"}),
	}
	m.newBackendMetrics()
	m.OutboundTokens = newOutboundTokens()
	for _, outcome := range []string{"ok", "invalid", "partial"} {
		m.ConfigReloads.WithLabelValues(outcome) // both series exist from the start (rate() needs them)
	}
	m.Registry.MustRegister(m.Requests, m.RequestLatency, m.ConfigReloads, m.Undeliverable, m.ProgressDropped, m.BackendRequests, m.BackendErrors, m.BackendLatency,
		m.Relayed, m.EventsNotStored, m.AuthRejected, m.SessionForbidden, m.OutboundTokens,
		m.GetStreamReconnects, m.GetStreamAbandoned, m.StdioSkippedLines, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	m.Undelivered = &Undelivered{m: m, now: time.Now, t: NewThrottled(nil)}
	m.Throttled = NewThrottled(nil)
	return m
}

// newBackendMetrics builds the backend-side series of m (requests,
// errors and latency per backend, GET stream and stdio counters, dropped
// progress).
func (m *Metrics) newBackendMetrics() {
	m.ProgressDropped = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmcp_progress_dropped_total",
		Help: "Backend progress notifications dropped (a token no call sent, or after its call ended), by backend and reason.",
	}, []string{"backend", "reason"})
	m.BackendRequests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmcp_backend_requests_total",
		Help: "Requests sent to backends on a client's behalf, by backend, method, client revision and outcome.",
	}, []string{"backend", "method", "revision", "outcome"})
	m.BackendErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmcp_backend_errors_total",
		Help: "Failed backend requests, by backend, method and client revision.",
	}, []string{"backend", "method", "revision"})
	m.BackendLatency = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "vmcp_backend_request_duration_seconds",
		Help:    "Duration of requests to backends in seconds, by backend and method.",
		Buckets: latencyBuckets,
	}, []string{"backend", "method"})
	m.GetStreamReconnects = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmcp_backend_get_stream_reconnects_total",
		Help: "Backend standalone GET streams reopened after they ended, by backend.",
	}, []string{"backend"})
	m.GetStreamAbandoned = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmcp_backend_get_stream_abandoned_total",
		Help: "Backend standalone GET streams no longer reopened (405, 404 or too many failed attempts), by backend.",
	}, []string{"backend"})
	m.StdioSkippedLines = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmcp_stdio_skipped_lines_total",
		Help: "Stdout lines of stdio backends that were not JSON-RPC and were skipped, by backend.",
	}, []string{"backend"})
}

// latencyBuckets are the histogram buckets in seconds, client and backend
// side alike, so the two can be compared.
var latencyBuckets = []float64{.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30}

// NewAuthRejected is the vmcp_auth_rejected_requests_total{reason} counter
// (for an authenticator built without a server's Metrics).
func NewAuthRejected() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmcp_auth_rejected_requests_total",
		Help: "MCP endpoint requests refused by authentication, by reason.",
	}, []string{"reason"})
}

// Handler serves m's registry in the Prometheus text format.
func (m *Metrics) Handler() http.Handler {
	return promhttp.HandlerFor(m.Registry, promhttp.HandlerOpts{})
}
