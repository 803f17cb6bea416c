package backends

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmcp/vmcp/pkg/telemetry"
)

// counters are the backends' own metrics, registered on the server's
// registry (WithMetrics); without one they count unregistered.
type counters struct {
	// getReconnects counts reopened backend GET streams, by backend.
	getReconnects *prometheus.CounterVec
	// getAbandoned counts GET streams vmcp stopped reopening (what the
	// backend sends there is then not received), by backend.
	getAbandoned *prometheus.CounterVec
	// stdioSkipped counts stdout lines of stdio backends that were not
	// JSON-RPC and were skipped, by backend.
	stdioSkipped *prometheus.CounterVec
	// undeliverable is the server's vmcp_undeliverable_messages_total.
	undeliverable *prometheus.CounterVec
}

func newCounters(m *telemetry.Metrics) *counters {
	c := &counters{
		getReconnects: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmcp_backend_get_stream_reconnects_total",
			Help: "Backend standalone GET streams reopened after they ended, by backend.",
		}, []string{"backend"}),
		getAbandoned: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmcp_backend_get_stream_abandoned_total",
			Help: "Backend standalone GET streams no longer reopened (405, 404 or too many failed attempts), by backend.",
		}, []string{"backend"}),
		stdioSkipped: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "vmcp_stdio_skipped_lines_total",
			Help: "Stdout lines of stdio backends that were not JSON-RPC and were skipped, by backend.",
		}, []string{"backend"}),
	}
	if m == nil {
		c.undeliverable = prometheus.NewCounterVec(prometheus.CounterOpts{Name: "vmcp_undeliverable_messages_total"}, []string{"method"})
		return c
	}
	c.undeliverable = m.Undeliverable
	m.Registry.MustRegister(c.getReconnects, c.getAbandoned, c.stdioSkipped)
	return c
}
