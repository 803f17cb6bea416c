package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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

// answerCheck checks the answer to one posted request (id, method) of a
// backend: msg unchanged, or the error response replacing it.
type answerCheck struct {
	backend, method string
	id              json.RawMessage
	key             string // wire.IDKey of id
}

func (c *answerCheck) rewrite(msg []byte) ([]byte, bool) {
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

// checkHTTP wraps a backend session's HTTP client so the answer to each
// POST of a request passes through answerCheck: a response to another id
// fails it (IDError), a checked method's empty result too (ResultError).
func checkHTTP(base *http.Client, backend string) *http.Client {
	return &http.Client{Transport: &checkTransport{base: base.Transport, backend: backend}}
}

type checkTransport struct {
	base    http.RoundTripper
	backend string
}

func (t *checkTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := t.posted(req)
	resp, err := t.base.RoundTrip(req)
	if err != nil || c == nil || resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return resp, err
	}
	return rewriteBody(resp, c.rewrite)
}

// posted is the check for req when it posts a request (with an id).
func (t *checkTransport) posted(req *http.Request) *answerCheck {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, maxResponse))
	var m wire.Message
	if err != nil || wire.Decode(b, &m) != nil || m.Method == "" {
		return nil
	}
	key, ok := wire.IDKey(m.ID)
	if !ok {
		return nil
	}
	return &answerCheck{backend: t.backend, method: m.Method, id: m.ID, key: key}
}

// checkTransportConn wraps a non-HTTP transport (stdio, SSE) so the
// answers to checked methods read off its connection are checked.
type checkTransportConn struct {
	mcp.Transport
	backend string
}

func (t *checkTransportConn) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &checkConn{Connection: c, backend: t.backend, sent: map[jsonrpc.ID]sentRequest{}}, nil
}

// checkConn remembers the method of each checked request it writes until
// its answer is read or its context ends (a cancelled call gets none).
type checkConn struct {
	mcp.Connection
	backend string
	mu      sync.Mutex
	sent    map[jsonrpc.ID]sentRequest
}

type sentRequest struct {
	method string
	stop   func() bool // the context's AfterFunc
}

func (c *checkConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() && checkedMethods[r.Method] {
		c.mu.Lock()
		c.sent[r.ID] = sentRequest{method: r.Method, stop: context.AfterFunc(ctx, func() { c.take(r.ID) })}
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

// take forgets request id and returns its method ("" for none).
func (c *checkConn) take(id jsonrpc.ID) string {
	c.mu.Lock()
	s, ok := c.sent[id]
	delete(c.sent, id)
	c.mu.Unlock()
	if ok {
		s.stop()
	}
	return s.method
}

func (c *checkConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Response); ok && err == nil {
		if method := c.take(r.ID); method != "" && r.Error == nil {
			if rerr := ResultError(c.backend, method, r.Result); rerr != nil {
				r.Result, r.Error = nil, rerr
			}
		}
	}
	return msg, err
}
