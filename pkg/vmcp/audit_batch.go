package vmcp

import (
	"bytes"
	"encoding/json"
	"net/http"

	"github.com/vmcp/vmcp/pkg/audit"
	"github.com/vmcp/vmcp/pkg/dispatch/legacy"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/wire"
)

// batchRequest is one request of a 2025-03-26 batch, as its body names it.
type batchRequest struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params struct {
		Name string `json:"name"`
		URI  string `json:"uri"`
	} `json:"params"`
}

// batchRequests are the requests (not notifications or responses) of
// body if it is a JSON-RPC batch of at most legacy.MaxBatch messages; ok
// is false for any other body.
func batchRequests(body []byte) (reqs []batchRequest, ok bool) {
	if !bytes.HasPrefix(bytes.TrimLeft(body, " \t\r\n"), []byte("[")) {
		return nil, false
	}
	var all []batchRequest
	if json.Unmarshal(body, &all) != nil || len(all) > legacy.MaxBatch {
		return nil, false
	}
	for _, m := range all {
		if _, hasID := wire.IDKey(m.ID); hasID && m.Method != "" {
			reqs = append(reqs, m)
		}
	}
	return reqs, true
}

// auditBatch writes one record per request of a 2025-03-26 batch, each
// with the batch's principal, client, session, status, bytes and trace
// context: a call, get or read served through Do with its own target,
// decision, outcome, duration and arguments (f.Members); any other
// request (a list, ping) with its method and the batch's outcome.
func (s *Server) auditBatch(base *audit.Record, reqs []batchRequest, f tracing.Facts) {
	served := f.Members
	for _, q := range reqs {
		rec := *base
		rec.Method, rec.Tool, rec.Prompt, rec.Resource, rec.Arguments = q.Method, "", "", "", nil
		name := q.Params.Name
		if q.Params.URI != "" {
			name = q.Params.URI
		}
		setTarget(&rec, name)
		if i := memberIndex(served, q.Method, name); i >= 0 {
			m := served[i]
			served = append(served[:i:i], served[i+1:]...)
			rec.Backend, rec.Decision, rec.Outcome, rec.Duration = m.Backend, m.Decision, m.Outcome, m.Duration
			if s.audit.Arguments() {
				rec.Arguments = m.Arguments
			}
		} else if base.Status < http.StatusBadRequest {
			rec.Backend, rec.Decision, rec.Outcome = "", audit.Decision{}, audit.Outcome{}
		}
		s.audit.Write(&rec)
	}
}

// memberIndex is the index of the first member of method and name, or -1.
func memberIndex(ms []tracing.Member, method, name string) int {
	for i, m := range ms {
		if m.Method == method && m.Name == name {
			return i
		}
	}
	return -1
}
