package vmcp

import "github.com/vmcp/vmcp/pkg/aggregator"

// OnOwnerChangeForTest registers f after the dispatchers' own-view
// listeners: f hears of a change once both have acted on it.
func (s *Server) OnOwnerChangeForTest(f func(aggregator.OwnerChange)) { s.agg.OnOwnerChange(f) }
