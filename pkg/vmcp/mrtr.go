package vmcp

import (
	"net/http"
)

// resumeOn is the Modern dispatcher's hook for a retry whose parked call
// lives on another cluster node (the owner sealed in its requestState): the
// request is forwarded to that node, which resumes the call. An error means
// nothing was written (the node is gone or unreachable) and the client gets
// -32602, as for any call that is no longer parked.
func (s *Server) resumeOn(w http.ResponseWriter, r *http.Request, node string) error {
	n, err := s.cluster.Node(r.Context(), node)
	if err != nil {
		return err
	}
	s.exchanges.Lookup(r.Header).Forward(r.Header) // the parking node's span is this one's child
	return s.cluster.Forward(w, r, n.URL)
}

// ModernListens is the number of open Modern subscriptions/listen streams.
func (s *Server) ModernListens() int { return s.modern.Subscriptions().Len() }

// ParkedCalls is the number of Legacy backend calls parked between
// input_required rounds for Modern clients.
func (s *Server) ParkedCalls() int { return s.modern.Parked().Len() }
