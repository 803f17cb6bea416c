// Package telemetry holds vmcp's Prometheus metrics. Every message vmcp
// cannot deliver is counted here as well as logged.
package telemetry

import (
	"net/http"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// Registry is vmcp's metric registry, served at /metrics.
var Registry = prometheus.NewRegistry()

// Undeliverable counts server-to-client messages vmcp could not deliver,
// by JSON-RPC method (for example notifications/progress).
var Undeliverable = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "vmcp_undeliverable_messages_total",
	Help: "Server-to-client messages vmcp could not deliver, by method.",
}, []string{"method"})

// BackendErrors counts failed calls to backends, by backend and method.
var BackendErrors = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "vmcp_backend_errors_total",
	Help: "Failed backend calls, by backend and method.",
}, []string{"backend", "method"})

// EventsNotStored counts session events (server-to-client messages) that
// could not be written to the cluster event store, so a Last-Event-ID
// resume cannot replay them (the live stream still carried them).
var EventsNotStored = prometheus.NewCounter(prometheus.CounterOpts{
	Name: "vmcp_session_events_not_stored_total",
	Help: "Session events that could not be written to the cluster event store.",
})

// Relayed counts Legacy client requests relayed as raw JSON-RPC on the
// client's backend session (not through the go-sdk server and client),
// by method.
var Relayed = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "vmcp_relayed_requests_total",
	Help: "Legacy client requests relayed as raw JSON-RPC to a backend session, by method.",
}, []string{"method"})

func init() {
	Registry.MustRegister(Undeliverable, BackendErrors, EventsNotStored, Relayed,
		prometheus.NewGoCollector(), prometheus.NewProcessCollector(prometheus.ProcessCollectorOpts{}))
}

// Handler serves the registry in the Prometheus text format.
func Handler() http.Handler { return promhttp.HandlerFor(Registry, promhttp.HandlerOpts{}) }
