// Package audit writes vmcp's audit log: one JSON object per line for
// every client request at the MCP endpoint (both revisions, every MRTR
// round, lists and listen streams), naming who asked what, what vmcp
// decided and how it ended (config `audit`). Records go through a bounded
// queue to one writer goroutine: a full queue drops the record (counted),
// so the log never blocks or fails a request. It never holds a token,
// cookie or header value: a Record has no field for one. Arguments (only
// with audit.arguments) are redacted: a key containing a redact entry,
// both normalised (Normalize: lower case, no "_", "-", "." or spaces), has
// its value replaced at any depth.
package audit

import (
	"encoding/json"
	"strconv"
	"time"
)

// Record is one line of the audit log. Empty optional fields are omitted.
type Record struct {
	Time      time.Time     `json:"-"` // when the request arrived; written as "time", RFC 3339 UTC with milliseconds
	Node      string        `json:"node"`
	Principal Principal     `json:"principal"`
	Client    *Client       `json:"client,omitempty"` // Legacy: the session's initialize; Modern: the request's _meta clientInfo
	Revision  string        `json:"revision"`         // legacy | modern
	Session   string        `json:"session,omitempty"`
	Listen    string        `json:"listen,omitempty"` // a Modern subscriptions/listen stream's id
	HTTP      string        `json:"http"`             // the HTTP method (POST, GET, DELETE)
	Method    string        `json:"method,omitempty"` // the JSON-RPC method
	Tool      string        `json:"tool,omitempty"`
	Prompt    string        `json:"prompt,omitempty"`
	Resource  string        `json:"resource,omitempty"`
	Backend   string        `json:"backend,omitempty"`
	Forwarded bool          `json:"forwarded,omitempty"` // served by another node (the session's owner, a parked call's node)
	Decision  Decision      `json:"decision"`
	Outcome   Outcome       `json:"outcome"`
	Status    int           `json:"status"` // the HTTP status written
	Duration  time.Duration `json:"-"`      // written as "duration_ms"
	BytesIn   int64         `json:"bytes_in"`
	BytesOut  int64         `json:"bytes_out"`
	// Traceparent is the request's W3C trace context: its server span's
	// with tracing on, else the client's own; "" with neither.
	Traceparent string `json:"traceparent,omitempty"`
	// Arguments are the raw tools/call or prompts/get arguments (audit.arguments
	// only); the writer redacts and caps them.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Truncated reports arguments cut at MaxArguments (then a JSON string).
	Truncated bool `json:"arguments_truncated,omitempty"`
}

// line is a Record as written: its time and duration in their formats.
type line struct {
	Time string `json:"time"`
	*Record
	DurationMS float64 `json:"duration_ms"`
}

// TimeFormat is RFC 3339 with milliseconds (written in UTC: a Z suffix).
const TimeFormat = "2006-01-02T15:04:05.000Z07:00"

// Principal is who the request spoke for: "anonymous" (no inbound auth,
// or refused before authentication) or its token's {iss, sub}.
type Principal struct {
	Issuer  string `json:"iss"`
	Subject string `json:"sub"`
}

// MarshalJSON writes "anonymous" for the zero Principal.
func (p Principal) MarshalJSON() ([]byte, error) {
	if p == (Principal{}) {
		return []byte(`"anonymous"`), nil
	}
	type plain Principal
	return json.Marshal(plain(p))
}

// Client is the client's own name and version (MCP clientInfo).
type Client struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// Who decided, in Decision.By.
const (
	ByAuthentication = "authentication" // no valid bearer token (HTTP 401/403 before JSON-RPC)
	ByAuthorization  = "authorization"  // authorization.rules; Rule is the index of the rule that decided
	ByRateLimit      = "rate_limit"     // rate_limits; Rule is the index of the limit exceeded
	// BySessionOwner is a Legacy session request by a principal other than
	// the one whose initialize created the session (403; the record has the
	// requesting principal and no client).
	BySessionOwner = "session_owner"
	// Refusals at the edge, before authentication (the record's outcome is
	// the HTTP status).
	ByHost        = "host"         // 403: a Host that http.allowed_hosts does not admit (DNS rebinding guard)
	ByOrigin      = "origin"       // 403: an Origin that http.allowed_origins does not list
	ByBodySize    = "body_size"    // 413: a body over http.max_body_bytes
	ByReadTimeout = "read_timeout" // 408: a body not received within http.read_body_timeout
	ByBodyRead    = "body_read"    // 400: the body could not be read
)

// Decision is what vmcp decided on the request: {"allowed": true} when
// nothing refused it (with By and Rule when an authorization rule allowed
// it), else {"allowed": false, "by": ..., "rule": N}. Rule is the 0-based
// index in the configured list, absent when no rule decided (no
// authorization rule allowed the item).
type Decision struct {
	Denied bool `json:"-"`
	// Backend is the backend the request was bound for when the decision
	// was made (written as the record's backend when no backend served it).
	Backend string `json:"-"`
	By      string `json:"by,omitempty"`
	Rule    *int   `json:"rule,omitempty"`
}

// MarshalJSON writes allowed first.
func (d Decision) MarshalJSON() ([]byte, error) {
	type plain Decision
	b, err := json.Marshal(plain(d))
	if err != nil {
		return nil, err
	}
	head := `{"allowed":` + strconv.FormatBool(!d.Denied)
	if len(b) > 2 {
		head += ","
	}
	return append([]byte(head), b[1:]...), nil
}

// RuleIndex returns a pointer to i (Decision.Rule), nil for i < 0.
func RuleIndex(i int) *int {
	if i < 0 {
		return nil
	}
	return &i
}

// Outcome is how the request ended, written as "ok", "cancelled" (its
// client cancelled or left first), the JSON-RPC error code answered (a
// negative number) or, for a refusal before JSON-RPC, the HTTP status (a
// positive number).
type Outcome struct {
	Cancelled bool
	Code      int64 // 0: ok
}

// MarshalJSON writes "ok", "cancelled" or the code.
func (o Outcome) MarshalJSON() ([]byte, error) {
	switch {
	case o.Cancelled:
		return []byte(`"cancelled"`), nil
	case o.Code == 0:
		return []byte(`"ok"`), nil
	}
	return strconv.AppendInt(nil, o.Code, 10), nil
}
