package auth

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/vmcp/vmcp/pkg/telemetry"
)

// Rejected counts endpoint requests refused by authentication, by reason:
// no_token, invalid_request, invalid_token, insufficient_scope or
// unavailable (the issuer could not be reached).
var Rejected = prometheus.NewCounterVec(prometheus.CounterOpts{
	Name: "vmcp_auth_rejected_requests_total",
	Help: "MCP endpoint requests refused by authentication, by reason.",
}, []string{"reason"})

func init() { telemetry.Registry.MustRegister(Rejected) }

// reason is f's label for Rejected.
func (f *Failure) reason() string {
	switch {
	case f.Status == 503:
		return "unavailable"
	case f.Code == "":
		return "no_token"
	default:
		return f.Code
	}
}
