package telemetry

import "github.com/prometheus/client_golang/prometheus"

// newOutboundTokens is vmcp_outbound_tokens_total: requests for backends'
// own tokens (token exchange, client credentials) by backend, auth type
// and outcome (issued, refused: an OAuth error answer, failed: no usable
// answer, rejected: the backend answered 401 to an issued token). No
// per-user label.
func newOutboundTokens() *prometheus.CounterVec {
	return prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "vmcp_outbound_tokens_total",
		Help: "Requests for backends' own tokens (token exchange, client credentials), by backend, auth type and outcome.",
	}, []string{"backend", "type", "outcome"})
}
