package legacy

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/wire"
)

// Refuse answers, before anything is served or forwarded, the
// Legacy requests whose status the go-sdk handler would get wrong, with
// the spec's status and a JSON-RPC error body: a POST body that is not
// JSON (400, -32700); a message that is neither a request, a notification
// nor a response (400, -32600); a message other than initialize without
// Mcp-Session-Id (400, -32600), and a GET or DELETE without one; a
// request of a method the server does not serve (400, -32601, its id). It
// returns false, with r.Body intact, for everything else. A batch is left
// to the go-sdk handler (2025-03-26 allows them) unless it holds more than
// MaxBatch messages or repeats a request id (400, -32600). A notification's method,
// and a refused message's, go to the request's tracing.Exchange.
func (d *Dispatcher) Refuse(w http.ResponseWriter, r *http.Request) bool {
	sid := r.Header.Get("Mcp-Session-Id")
	switch r.Method {
	case http.MethodGet, http.MethodDelete:
		if sid == "" {
			wire.WriteError(w, http.StatusBadRequest, nil, invalidRequest(r.Method+" requires an Mcp-Session-Id header (initialize starts a session)"))
			return true
		}
		return false
	case http.MethodPost:
	default:
		return false
	}
	if !wire.IsMediaType(r.Header.Get("Content-Type"), "application/json") {
		return false // the go-sdk handler's 415
	}
	body, ok := d.readBody(r)
	if !ok {
		return false // the go-sdk handler's 413
	}
	m, jerr := checkMessage(body, sid != "")
	d.observe(r, m, jerr != nil)
	if jerr == nil {
		return false
	}
	var id json.RawMessage
	if m != nil {
		id = m.ID
		if m.Method == "" && sid != "" {
			d.endAnswered(r, sid, m)
		}
	}
	wire.WriteError(w, http.StatusBadRequest, id, jerr)
	return true
}

// endAnswered ends the request of session sid that m, an answer with
// neither result nor error, answers: a relayed one gets m (the relay
// tells the backend), one of the go-sdk server gets an error response.
func (d *Dispatcher) endAnswered(r *http.Request, sid string, m *message) {
	s := d.lookup(sid)
	key, ok := wire.IDKey(m.ID)
	if s == nil || !ok || s.relayState.deliver(key, m) {
		return
	}
	body := wire.ErrorResponse(m.ID, invalidRequest("the client answered with neither result nor error"))
	r = r.Clone(r.Context())
	r.Body, r.ContentLength = wire.NewBufferedBody(body), int64(len(body))
	d.handler.ServeHTTP(discarded{}, r)
}

// observe tells r's Exchange (the endpoint's metrics and span) the method
// of m if nobody else will: a notification is answered 202 before the
// go-sdk handles it, and a message refused here goes no further. A
// request served on is reported by whoever serves it (with its target).
func (d *Dispatcher) observe(r *http.Request, m *message, refused bool) {
	if m == nil || m.Method == "" {
		return
	}
	if _, hasID := wire.IDKey(m.ID); !hasID {
		d.opts.Exchanges.Lookup(r.Header).ObserveNotification(m.Method, metaOf(m.Params))
	} else if refused {
		d.opts.Exchanges.Lookup(r.Header).Observe(m.Method, "", nil)
	}
}

// metaOf is the raw _meta of params, decoded only if it may hold trace
// context (nil otherwise).
func metaOf(params json.RawMessage) json.RawMessage {
	if !bytes.Contains(params, []byte("traceparent")) && !bytes.Contains(params, []byte("baggage")) {
		return nil
	}
	var p struct {
		Meta json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(params, &p)
	return p.Meta
}

// discarded is a response nobody reads.
type discarded struct{}

func (discarded) Header() http.Header         { return http.Header{} }
func (discarded) Write(p []byte) (int, error) { return len(p), nil }
func (discarded) WriteHeader(int)             {}

// MaxBatch is how many messages one 2025-03-26 JSON-RPC batch may hold:
// the go-sdk serves a batch's requests at once, so a larger one is refused
// (400, -32600 naming the bound) before any of it is served.
const MaxBatch = 64

// checkBatch refuses a batch of more than MaxBatch messages, or one whose
// requests repeat an id (the go-sdk would serve one and drop the other
// unanswered); body is valid JSON.
func checkBatch(body []byte) *jsonrpc.Error {
	var members []struct {
		ID     json.RawMessage `json:"id"`
		Method string          `json:"method"`
	}
	if err := json.Unmarshal(body, &members); err != nil {
		return nil // not an array of messages: the go-sdk's answer
	}
	if len(members) > MaxBatch {
		return invalidRequest(fmt.Sprintf("a JSON-RPC batch holds at most %d messages (this one %d)", MaxBatch, len(members)))
	}
	seen := make(map[string]bool, len(members))
	for _, m := range members {
		key, ok := wire.IDKey(m.ID)
		if !ok || m.Method == "" {
			continue // a notification or a response
		}
		if seen[key] {
			return invalidRequest("a JSON-RPC batch repeats request id " + wire.Quote(string(m.ID)))
		}
		seen[key] = true
	}
	return nil
}

// checkMessage checks one POST body; m is the message, if it is one (nil
// for a batch).
func checkMessage(body []byte, inSession bool) (m *message, jerr *jsonrpc.Error) {
	if !json.Valid(body) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: "parse error: the request body is not valid JSON"}
	}
	t := bytes.TrimLeft(body, " \t\r\n")
	if t[0] == '[' {
		return nil, checkBatch(body)
	}
	if t[0] != '{' {
		return nil, invalidRequest("a JSON-RPC message is an object")
	}
	m = new(message)
	if err := wire.Decode(body, m); err != nil {
		return nil, invalidRequest(fmt.Sprintf("invalid JSON-RPC message: %v", err))
	}
	switch {
	case !wire.IsJSONRPC(m.JSONRPC):
		return m, invalidRequest(`invalid JSON-RPC message: "jsonrpc" must be "2.0"`)
	case m.Method == "" && m.Result == nil && m.Error == nil:
		return m, invalidRequest(`invalid JSON-RPC message: no "method" (a request or notification) and no "result" or "error" (a response)`)
	case !inSession && m.Method != "initialize":
		what := "a response"
		if m.Method != "" {
			what = wire.Quote(m.Method)
		}
		return m, invalidRequest(fmt.Sprintf("Mcp-Session-Id header required: %s sent without a session (only initialize starts one)", what))
	}
	return m, unknownMethod(m)
}

// servedMethods are the methods the go-sdk server serves (its
// serverMethodInfos, go-sdk v1.8.0): requests and notifications. vmcp
// registers no custom methods.
var servedMethods = map[string]bool{
	"initialize": true, "ping": true, "server/discover": true, "completion/complete": true,
	"tools/list": true, "tools/call": true, "prompts/list": true, "prompts/get": true,
	"resources/list": true, "resources/templates/list": true, "resources/read": true,
	"resources/subscribe": true, "resources/unsubscribe": true, "subscriptions/listen": true,
	"logging/setLevel": true, "notifications/cancelled": true, "notifications/initialized": true,
	"notifications/roots/list_changed": true, "notifications/progress": true,
}

// unknownMethod is -32601 (Method not found) for a request, with an id, of
// a method the server does not serve: the go-sdk handler would refuse it
// as a plain-text 400 (-32600, id null). nil otherwise (a notification of
// an unknown method is accepted and dropped: ignoreNotification).
func unknownMethod(m *message) *jsonrpc.Error {
	if _, hasID := wire.IDKey(m.ID); !hasID || m.Method == "" || servedMethods[m.Method] {
		return nil
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("method not found: %s", wire.Quote(m.Method))}
}

// ignoreNotification answers a notification of a method vmcp does not
// handle with 202 and no body, and drops it (logged at debug): JSON-RPC
// never answers a notification and Streamable HTTP accepts one with 202,
// where the go-sdk handler would refuse it (400, -32600).
func (d *Dispatcher) ignoreNotification(w http.ResponseWriter, s *clientSession, method string) {
	d.log.Debug("notification of a method vmcp does not handle ignored", "session", telemetry.SessionTag(s.id), "method", wire.Quote(method))
	w.WriteHeader(http.StatusAccepted)
}

func invalidRequest(msg string) *jsonrpc.Error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: msg}
}
