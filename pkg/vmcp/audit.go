package vmcp

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"github.com/vmcp/vmcp/pkg/audit"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// openAudit opens the audit log the config's audit section asks for (none
// without one); its counters go on the server's registry.
func (s *Server) openAudit(opts Options) error {
	a := s.cfg.Audit
	if a == nil {
		return nil
	}
	l, err := audit.Open(audit.Options{Path: a.Path, Arguments: a.Arguments, Redact: a.Redact, Logger: s.log,
		Registerer: s.metrics.Registry, Queue: opts.AuditQueue, Open: opts.AuditOpen})
	if err != nil {
		return err
	}
	s.audit = l
	return nil
}

// ReopenAudit closes the audit log file and opens its path again, after
// the records queued so far are written (log rotation; Watch calls it on
// SIGHUP). Without an audit log it does nothing. On an error the old
// file stays in use.
func (s *Server) ReopenAudit() error { return s.audit.Reopen() }

// admit tells r's Exchange that r passed authentication, for the audit
// log's principal.
func (s *Server) admit(r *http.Request) {
	if s.audit == nil {
		return
	}
	p := identity.From(r.Context())
	s.exchanges.Lookup(r.Header).Admit(audit.Principal{Issuer: p.Issuer, Subject: p.Subject})
}

// auditBegin starts r's audit record (nil without an audit log) with
// what is known before it is served: the Legacy session's client is looked
// up now, before a DELETE ends the session. body is r's body as the edge
// read it (the go-sdk handler replaces r.Body while it serves r).
func (s *Server) auditBegin(r *http.Request, x *tracing.Exchange, revision string) (rec *audit.Record, body []byte) {
	if s.audit == nil {
		return nil, nil
	}
	rec = &audit.Record{Time: x.Started(), Node: s.cluster.Self().ID, Revision: revision, HTTP: r.Method}
	if bb, ok := r.Body.(*wire.BufferedBody); ok {
		body = bb.Bytes()
		rec.BytesIn = int64(len(body))
	}
	if sid := r.Header.Get("Mcp-Session-Id"); sid != "" && revision == upstream.RevisionLegacy {
		rec.Client = s.legacyClient(sid)
	}
	return rec, body
}

// auditEnd completes rec with how the request ended and queues it (body:
// the request's, as auditBegin kept it).
func (s *Server) auditEnd(rec *audit.Record, body []byte, x *tracing.Exchange, sw *statusWriter, sid string, out tracing.Outcome) {
	if rec == nil {
		return
	}
	f := x.Facts()
	rec.Duration = time.Since(rec.Time)
	rec.Status, rec.BytesOut, rec.Method, rec.Backend, rec.Forwarded = sw.code(), sw.written, out.Method, f.Backend, f.Forwarded
	if rec.Backend == "" {
		rec.Backend = f.Decision.Backend // a denied call: the backend it was bound for, not asked
	}
	rec.Outcome = outcomeOf(out.Cancelled, f.ErrType, sw.errCode, rec.Status)
	s.who(rec, f, sid)
	setTarget(rec, f.Name)
	if sc := f.Span; sc.IsValid() {
		rec.Traceparent = "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
	}
	if reqs, ok := batchRequests(body); ok && len(reqs) > 0 && rec.Revision == upstream.RevisionLegacy {
		go func() { // ends when the batch's last handler returns (each bounded by its backend's timeout)
			<-x.Idle()
			s.auditBatch(rec, reqs, x.Facts())
		}()
		return
	}
	if rec.Method == "subscriptions/listen" {
		rec.Listen = idText(bodyID(body))
	}
	if s.audit.Arguments() && (rec.Method == "tools/call" || rec.Method == "prompts/get") {
		rec.Arguments = arguments(body)
	}
	s.audit.Write(rec)
}

// who fills in the principal, the decision, the client and the session:
// a request refused for presenting another principal's session has the
// requesting principal and not the session's client.
func (s *Server) who(rec *audit.Record, f tracing.Facts, sid string) {
	rec.Decision = f.Decision
	if f.Principal != nil {
		rec.Principal = *f.Principal
	} else if s.auth != nil && (rec.Status == http.StatusUnauthorized || rec.Status == http.StatusForbidden) {
		rec.Decision = audit.Decision{Denied: true, By: audit.ByAuthentication}
	}
	if rec.Revision != upstream.RevisionLegacy {
		rec.Client = f.Client
		return
	}
	rec.Session = sid
	if rec.Decision.By == audit.BySessionOwner {
		rec.Client = nil // the owner's, looked up by auditBegin
		return
	}
	if rec.Client == nil && sid != "" {
		rec.Client = s.legacyClient(sid) // initialize: the session it created
	}
}

// legacyClient is the clientInfo of Legacy session sid (nil if it does
// not live here).
func (s *Server) legacyClient(sid string) *audit.Client {
	name, version, ok := s.legacy.ClientInfo(sid)
	if !ok {
		return nil
	}
	return &audit.Client{Name: name, Version: version}
}

// outcomeOf is the record's outcome: cancelled; else the JSON-RPC error
// code answered (errCode, read from the response), else reported (Fail);
// else the HTTP status of a refusal; else ok.
func outcomeOf(cancelled bool, errType string, errCode int64, status int) audit.Outcome {
	switch {
	case cancelled:
		return audit.Outcome{Cancelled: true}
	case errCode != 0:
		return audit.Outcome{Code: errCode}
	}
	if c, err := strconv.ParseInt(errType, 10, 64); err == nil {
		return audit.Outcome{Code: c}
	}
	if status >= 400 {
		return audit.Outcome{Code: int64(status)}
	}
	if errType != "" {
		return audit.Outcome{Code: -32603} // a failure without a code
	}
	return audit.Outcome{}
}

// setTarget puts name in the record's field for its method.
func setTarget(rec *audit.Record, name string) {
	switch rec.Method {
	case "tools/call":
		rec.Tool = name
	case "prompts/get":
		rec.Prompt = name
	case "resources/read", "resources/subscribe", "resources/unsubscribe":
		rec.Resource = name
	}
}

// idText is a raw JSON-RPC id as text: a string's value, a number's digits.
func idText(id json.RawMessage) string {
	var s string
	if json.Unmarshal(id, &s) == nil {
		return s
	}
	return string(id)
}

// arguments are the raw params.arguments of body, nil if none.
func arguments(body []byte) json.RawMessage {
	var m struct {
		Params struct {
			Arguments json.RawMessage `json:"arguments"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return nil
	}
	return m.Params.Arguments
}
