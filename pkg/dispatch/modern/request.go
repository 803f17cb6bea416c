package modern

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/wire"
)

// Header names of the Streamable HTTP transport (2026-07-28).
const (
	headerVersion = "Mcp-Protocol-Version"
	headerMethod  = "Mcp-Method"
	headerName    = "Mcp-Name"
	headerParam   = wire.ParamHeaderPrefix
)

// envelope is the JSON-RPC message as first decoded (wire.Message).
type envelope = wire.Message

// request is one Modern POST while it is served.
type request struct {
	w            http.ResponseWriter
	r            *http.Request
	id           json.RawMessage // raw JSON-RPC id; nil for a notification
	method       string
	params       json.RawMessage
	version      string // MCP-Protocol-Version header
	notification bool
	clientCaps   any         // _meta clientCapabilities, forwarded to Modern backends
	written      bool        // the handler wrote the response itself (listen)
	body         []byte      // the raw body (handed over intact by Options.ResumeOn)
	stream       *callStream // progress and logs of a call (stream.go); nil otherwise
	sse          bool        // the client ranks text/event-stream above application/json
}

// parse checks the HTTP request and decodes the JSON-RPC envelope. On
// failure it has already answered and returns false.
func (d *Dispatcher) parse(w http.ResponseWriter, r *http.Request) (*request, bool) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "Method Not Allowed: a 2026-07-28 endpoint accepts POST only", http.StatusMethodNotAllowed)
		return nil, false
	}
	if wire.MediaType(r.Header.Get("Content-Type")) != "application/json" {
		http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		return nil, false
	}
	if !wire.AcceptsBoth(r.Header.Values("Accept")) {
		http.Error(w, wire.AcceptPOSTRequired, http.StatusBadRequest)
		return nil, false
	}
	body, ok := readBody(w, r, d.opts.MaxBodyBytes)
	if !ok {
		return nil, false
	}
	rq := &request{w: w, r: r, version: r.Header.Get(headerVersion), body: body,
		sse: wire.PrefersEventStream(r.Header.Values("Accept"))}
	if jerr := rq.decode(body); jerr != nil {
		writeError(w, http.StatusBadRequest, rq.id, jerr)
		return nil, false
	}
	return rq, true
}

// decode fills rq from body: a single JSON-RPC request or notification.
// Batches, responses and JSON other than an object are -32600 errors,
// what is not JSON -32700.
func (rq *request) decode(body []byte) *jsonrpc.Error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "JSON-RPC batches are not supported in protocol 2026-07-28: send one message per POST"}
	}
	if len(trimmed) > 0 && trimmed[0] != '{' && json.Valid(body) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "a JSON-RPC message is an object"}
	}
	var env envelope
	if err := wire.Decode(body, &env); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: fmt.Sprintf("malformed JSON-RPC message: %v", err)}
	}
	if _, ok := wire.IDKey(env.ID); ok {
		rq.id = env.ID
	}
	switch {
	case !wire.IsJSONRPC(env.JSONRPC):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: `"jsonrpc" must be "2.0"`}
	case env.Method == "" && (env.Result != nil || env.Error != nil):
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "JSON-RPC responses are not accepted: a 2026-07-28 server sends no requests"}
	case env.Method == "":
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: `missing "method"`}
	case env.ID != nil && rq.id == nil:
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: `"id" must be a string or a number`}
	}
	rq.method, rq.params, rq.notification = env.Method, env.Params, env.ID == nil
	return nil
}

// readBody reads the whole body within limit (wire.ReadBody), answering
// 413 beyond it and 400 for an empty or unreadable body.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	body, err := wire.ReadBody(r, limit)
	switch {
	case errors.Is(err, wire.ErrBodyTooLarge):
		http.Error(w, fmt.Sprintf("request body exceeds %d bytes", limit), http.StatusRequestEntityTooLarge)
		return nil, false
	case err != nil:
		http.Error(w, "failed to read body", http.StatusBadRequest)
		return nil, false
	case len(body) == 0:
		http.Error(w, "POST requires a non-empty body", http.StatusBadRequest)
		return nil, false
	}
	return body, true
}

// notify answers a notification: 202 for the ones a 2026-07-28 client may
// send (after the Mcp-Method check), 404 + -32601 (no id) for removed or
// unknown ones. vmcp has no per-request state a notification could change:
// a client cancels a request by closing its stream.
func (d *Dispatcher) notify(rq *request) {
	if !clientNotifications[rq.method] {
		rq.fail(&jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("notification %s is not supported in protocol %s", wire.Quote(rq.method), FirstVersion)})
		return
	}
	if jerr := checkMethodHeader(rq); jerr != nil {
		rq.fail(jerr)
		return
	}
	rq.w.WriteHeader(http.StatusAccepted)
}

// clientNotifications are the client-to-server notifications of 2026-07-28
// (notifications/initialized and roots/list_changed were removed).
var clientNotifications = map[string]bool{
	"notifications/cancelled": true,
	"notifications/progress":  true,
}
