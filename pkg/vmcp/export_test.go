package vmcp

import (
	"net/http"

	"github.com/vmcp/vmcp/pkg/aggregator"
)

// OnOwnerChangeForTest registers f after the dispatchers' own-view
// listeners: f hears of a change once both have acted on it.
func (s *Server) OnOwnerChangeForTest(f func(aggregator.OwnerChange)) { s.agg.OnOwnerChange(f) }

// ObservedForTest wraps next as the MCP endpoint is wrapped (observed).
func (s *Server) ObservedForTest(next http.Handler) http.Handler { return s.observed(next) }
