package mcpmsg

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/wire"
)

// The result check: a backend answering a request with "result": null (or
// with neither a result nor an error, or a result that is not an object)
// reached vmcp through the go-sdk client as an empty success, since the SDK
// decodes null into a zero result (a CallToolResult without content, a
// ListToolsResult without tools). Every go-sdk backend connection reads the
// responses to the methods below on the wire before the SDK does, and such
// an answer becomes the JSON-RPC error -32603 naming the backend and the
// method (ResultError). The relay and direct calls check the raw result
// they already hold the same way.

// checkedMethods are the requests whose results have required members.
var checkedMethods = map[string]bool{
	"tools/call": true, "prompts/get": true, "resources/read": true, "completion/complete": true,
	"tools/list": true, "prompts/list": true, "resources/list": true, "resources/templates/list": true,
}

// ResultError is the error for backend's answer to method whose result is
// absent, null or not a JSON object (-32603, naming both); nil for an object.
func ResultError(backend, method string, result json.RawMessage) error {
	r := bytes.TrimSpace(result)
	var what string
	switch {
	case len(r) > 0 && r[0] == '{':
		return nil
	case len(r) == 0:
		what = "no result"
	case string(r) == "null":
		what = "a null result"
	default:
		what = fmt.Sprintf("a result that is not an object (%s)", wire.Clip(string(r)))
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("backend %q answered %s with %s", backend, method, what)}
}

// IDError is the error for backend's answer to request id (of method)
// that carries another id, got (-32603, naming both). On a request's own
// POST (its JSON body or SSE stream) no other request's response is due,
// so the request fails at once instead of waiting for its own.
func IDError(backend, method string, id, got json.RawMessage) error {
	other := "without an id"
	if len(got) > 0 {
		other = "to id " + wire.Clip(string(got))
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("backend %q answered %s (id %s) with a response %s", backend, method, wire.Clip(string(id)), other)}
}

// Checked reports whether method's result has required members (tools/call,
// prompts/get, resources/read, completion/complete and the four lists),
// so an absent, null or non-object result is an error (ResultError).
func Checked(method string) bool { return checkedMethods[method] }

// AnswerCheck checks the answer to one posted request (id, method) of a
// backend: Rewrite returns the message unchanged, or the error response
// replacing it (IDError, ResultError).
type AnswerCheck struct {
	backend, method string
	id              json.RawMessage
	key             string // wire.IDKey of id
}

// NewAnswerCheck is the check of backend's answer to the request msg (raw
// JSON-RPC); nil when msg is not a request with an id.
func NewAnswerCheck(backend string, msg []byte) *AnswerCheck {
	var m wire.Message
	if wire.Decode(msg, &m) != nil || m.Method == "" {
		return nil
	}
	key, ok := wire.IDKey(m.ID)
	if !ok {
		return nil
	}
	return &AnswerCheck{backend: backend, method: m.Method, id: m.ID, key: key}
}

// Rewrite returns msg, a message read on the request's own stream, or the
// error response that replaces it, and whether it was replaced.
func (c *AnswerCheck) Rewrite(msg []byte) ([]byte, bool) {
	var m wire.Message
	if len(bytes.TrimSpace(msg)) == 0 || wire.Decode(msg, &m) != nil || m.Method != "" {
		return msg, false
	}
	if k, ok := wire.IDKey(m.ID); !ok || k != c.key {
		return wire.ErrorResponse(c.id, IDError(c.backend, c.method, c.id, m.ID)), true
	}
	if !checkedMethods[c.method] || (len(m.Error) > 0 && string(m.Error) != "null") {
		return msg, false
	}
	if err := ResultError(c.backend, c.method, m.Result); err != nil {
		return wire.ErrorResponse(c.id, err), true
	}
	return msg, false
}
