package session

import (
	"net/http"
	"slices"

	"github.com/vmcp/vmcp/pkg/identity"
)

// Bind records the principal the set's backend sessions speak for (with
// its latest validated access token, the subject of token exchanges):
// the owning client session's, at every one of its requests.
func (s *Set) Bind(pr identity.Principal) {
	if !pr.Anonymous() {
		s.bound.Store(&pr)
	}
}

// principal is the set's bound principal (anonymous before Bind).
func (s *Set) principal() identity.Principal {
	if p := s.bound.Load(); p != nil {
		return *p
	}
	return identity.Principal{}
}

// Forward records the forwarded headers of one of the client session's
// requests (initialize and every later one): its backend sessions send
// them on every request of their own (initialize, notifications, the GET
// stream, DELETE, the re-initialize after a 404). A request carrying none
// of the forwarded names leaves the last ones in place. The headers are
// this client session's alone.
func (s *Set) Forward(h http.Header) {
	names := s.m.ForwardHeaders()
	if len(names) == 0 || h == nil {
		return
	}
	out := http.Header{}
	for _, name := range names {
		if v := h.Values(name); len(v) > 0 {
			out[name] = slices.Clone(v)
		}
	}
	if len(out) > 0 {
		s.header.Store(&out)
	}
}

// held is the client session's latest forwarded headers (nil: none yet).
func (s *Set) held() http.Header {
	if p := s.header.Load(); p != nil {
		return *p
	}
	return nil
}
