package tracing

import (
	"encoding/json"
	"time"

	"github.com/vmcp/vmcp/pkg/audit"
	"go.opentelemetry.io/otel/trace"
)

// Decide reports what vmcp decided on the request (an authorization rule,
// a rate limit), for the audit log; a denial is kept over later reports.
func (x *Exchange) Decide(d audit.Decision) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.ended && !x.decision.Denied {
		x.decision = d
	}
}

// clientInfo is a request's _meta clientInfo value (2026-07-28:
// io.modelcontextprotocol/clientInfo, decoded or still raw) as a Client,
// nil if none.
func clientInfo(info any) *audit.Client {
	var c audit.Client
	switch v := info.(type) {
	case map[string]any:
		c.Name, _ = v["name"].(string)
		c.Version, _ = v["version"].(string)
	case json.RawMessage:
		if json.Unmarshal(v, &c) != nil {
			return nil
		}
	default:
		return nil
	}
	return &c
}

// Admit reports that the request passed authentication (or needed none),
// speaking for p: the audit log's principal.
func (x *Exchange) Admit(p audit.Principal) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if !x.ended {
		x.principal = &p
	}
}

// Facts are what the audit log records of a request besides its Outcome
// (audit.Record).
type Facts struct {
	Name      string            // the tool or prompt name or resource URI
	Backend   string            // the backend that served it ("" if none)
	ErrType   string            // what Fail reported: a JSON-RPC code or another cause
	Forwarded bool              // served by another node
	Client    *audit.Client     // the _meta clientInfo reported (Modern), nil if none
	Decision  audit.Decision    // Decide's report
	Span      trace.SpanContext // the request's span (the client's trace context with tracing off)
	Principal *audit.Principal  // Admit's report: nil if the request never passed authentication
	Members   []Member          // AddMember's reports, in the order they ended
}

// Member is one request of a 2025-03-26 batch that vmcp served through
// Do, as its own audit record tells it: its target, decision and outcome.
type Member struct {
	Method, Name string         // the JSON-RPC method; the tool or prompt name or resource URI
	Backend      string         // the backend it was bound for ("" if none)
	Decision     audit.Decision // what Route decided on it
	Outcome      audit.Outcome  // ok, cancelled or the JSON-RPC error code answered
	Duration     time.Duration
	Arguments    json.RawMessage // a call's or a get's raw arguments
}

// MaxMembers bounds the batch members an Exchange keeps (a batch larger
// than the Legacy dispatcher's bound is refused before any is served).
const MaxMembers = 64

// AddMember reports one batch member's facts (at most MaxMembers kept),
// also after End: a member may end after its HTTP request did (Idle).
func (x *Exchange) AddMember(m Member) {
	if x == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if len(x.members) < MaxMembers {
		x.members = append(x.members, m)
	}
}

// Facts returns what was reported of the request, once End has run.
func (x *Exchange) Facts() Facts {
	x.mu.Lock()
	defer x.mu.Unlock()
	f := Facts{Name: x.name, Backend: x.backend, ErrType: x.errType, Forwarded: x.forwarded, Client: clientInfo(x.client),
		Decision: x.decision, Principal: x.principal, Members: x.members}
	if x.ctx != nil {
		f.Span = trace.SpanContextFromContext(x.ctx)
	}
	return f
}
