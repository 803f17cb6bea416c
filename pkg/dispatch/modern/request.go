package modern

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/wire"
)

// Header names of the Streamable HTTP transport (2026-07-28).
const (
	headerVersion = "Mcp-Protocol-Version"
	headerMethod  = "Mcp-Method"
	headerName    = "Mcp-Name"
	headerParam   = "Mcp-Param-"
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
}

// parse checks the HTTP request and decodes the JSON-RPC envelope. On
// failure it has already answered and returns false.
func (d *Dispatcher) parse(w http.ResponseWriter, r *http.Request) (*request, bool) {
	if rebinding(r) {
		http.Error(w, fmt.Sprintf("Forbidden: invalid Host header %q", r.Host), http.StatusForbidden)
		return nil, false
	}
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "Method Not Allowed: a 2026-07-28 endpoint accepts POST only", http.StatusMethodNotAllowed)
		return nil, false
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		http.Error(w, "Content-Type must be 'application/json'", http.StatusUnsupportedMediaType)
		return nil, false
	}
	if !wire.AcceptsBoth(r.Header.Values("Accept")) {
		http.Error(w, "Accept must contain both 'application/json' and 'text/event-stream'", http.StatusBadRequest)
		return nil, false
	}
	body, ok := readBody(w, r, d.opts.MaxBodyBytes)
	if !ok {
		return nil, false
	}
	rq := &request{w: w, r: r, version: r.Header.Get(headerVersion), body: body}
	if jerr := rq.decode(body); jerr != nil {
		writeError(w, http.StatusBadRequest, rq.id, jerr)
		return nil, false
	}
	return rq, true
}

// decode fills rq from body: a single JSON-RPC request or notification.
// Batches, responses and malformed envelopes are -32600/-32700 errors.
func (rq *request) decode(body []byte) *jsonrpc.Error {
	trimmed := bytes.TrimLeft(body, " \t\r\n")
	if len(trimmed) > 0 && trimmed[0] == '[' {
		return &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "JSON-RPC batches are not supported in protocol 2026-07-28: send one message per POST"}
	}
	var env envelope
	if err := json.Unmarshal(body, &env); err != nil {
		return &jsonrpc.Error{Code: jsonrpc.CodeParseError, Message: fmt.Sprintf("malformed JSON-RPC message: %v", err)}
	}
	if validID(env.ID) {
		rq.id = env.ID
	}
	switch {
	case env.JSONRPC != "2.0":
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

// validID reports whether raw is a JSON string or number (JSON-RPC ids;
// null is not accepted as a request id).
func validID(raw json.RawMessage) bool {
	if len(raw) == 0 {
		return false
	}
	c := raw[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

// readBody reads the whole body within limit, answering 413 beyond it and
// 400 for an empty or unreadable body.
func readBody(w http.ResponseWriter, r *http.Request, limit int64) ([]byte, bool) {
	rd := io.Reader(r.Body)
	if limit > 0 {
		rd = http.MaxBytesReader(w, r.Body, limit)
	}
	size := r.ContentLength
	if size < 0 || size > 1<<20 || (limit > 0 && size > limit) {
		size = 512
	}
	buf := bytes.NewBuffer(make([]byte, 0, size+1))
	if _, err := buf.ReadFrom(rd); err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", mbe.Limit), http.StatusRequestEntityTooLarge)
			return nil, false
		}
		http.Error(w, "failed to read body", http.StatusBadRequest)
		return nil, false
	}
	if buf.Len() == 0 {
		http.Error(w, "POST requires a non-empty body", http.StatusBadRequest)
		return nil, false
	}
	return buf.Bytes(), true
}

// rebinding reports a DNS-rebinding attempt: a request reaching a loopback
// listener under a non-loopback Host (the SDK handler's localhost check).
func rebinding(r *http.Request) bool {
	la, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
	return ok && la != nil && isLoopback(la.String()) && !isLoopback(r.Host)
}

// isLoopback reports whether addr (host or host:port) is localhost or a
// loopback IP.
func isLoopback(addr string) bool {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = strings.Trim(addr, "[]")
	}
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// notify answers a notification: 202 for the ones a 2026-07-28 client may
// send (after the Mcp-Method check), 404 + -32601 (no id) for removed or
// unknown ones. vmcp has no per-request state a notification could change:
// a client cancels a request by closing its stream.
func (d *Dispatcher) notify(rq *request) {
	if !clientNotifications[rq.method] {
		rq.fail(&jsonrpc.Error{Code: jsonrpc.CodeMethodNotFound, Message: fmt.Sprintf("notification %q is not supported in protocol %s", rq.method, FirstVersion)})
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
