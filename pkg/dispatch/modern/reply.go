package modern

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// statusFor maps a JSON-RPC error code to the HTTP status of a 2026-07-28
// reply: -32601 → 404; -32602, -32020, -32021, -32022 → 400; others 200.
func statusFor(code int64) int {
	switch code {
	case jsonrpc.CodeMethodNotFound:
		return http.StatusNotFound
	case jsonrpc.CodeInvalidParams, mcp.CodeHeaderMismatch,
		mcp.CodeMissingRequiredClientCapabilities, mcp.CodeUnsupportedProtocolVersion:
		return http.StatusBadRequest
	}
	return http.StatusOK
}

// toWireError returns err as a JSON-RPC error (-32603 unless it is one).
func toWireError(err error) *jsonrpc.Error {
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		return we
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
}

// reply writes a successful response; result is the marshaled result.
func (rq *request) reply(result []byte) {
	buf := wire.Response(rq.id, result)
	if rq.stream != nil {
		rq.stream.finish(http.StatusOK, buf) // the last event once the response is SSE
		return
	}
	rq.write(http.StatusOK, buf)
}

// write answers with msg alone: one SSE event when the client ranks
// text/event-stream first and the status is 200, else a JSON body.
func (rq *request) write(status int, msg []byte) {
	if rq.sse && status == http.StatusOK {
		ew := wire.NewEventWriter(rq.w)
		_ = ew.Send(msg)
		ew.Close()
		return
	}
	writeJSON(rq.w, status, msg)
}

// fail writes an error response with the status of its code (as the last
// event instead when the request's SSE response has begun).
func (rq *request) fail(jerr *jsonrpc.Error) {
	body := errorBody(rq.id, jerr)
	if rq.stream != nil {
		rq.stream.finish(statusFor(jerr.Code), body)
		return
	}
	rq.write(statusFor(jerr.Code), body)
}

// writeError writes a JSON-RPC error response echoing the raw id; with no
// id (a notification, or an unreadable one) the id is omitted.
func writeError(w http.ResponseWriter, status int, id json.RawMessage, jerr *jsonrpc.Error) {
	writeJSON(w, status, errorBody(id, jerr))
}

// errorBody is the JSON-RPC error response echoing the raw id (omitted
// when nil).
func errorBody(id json.RawMessage, jerr *jsonrpc.Error) []byte {
	return wire.ErrorResponse(id, jerr)
}

// writeJSON writes one JSON-RPC message as the body (wire.WriteJSON).
func writeJSON(w http.ResponseWriter, status int, body []byte) { wire.WriteJSON(w, status, body) }

// meta is the _meta of a result vmcp builds: serverInfo only.
func (d *Dispatcher) meta() mcp.Meta {
	return mcp.Meta{mcp.MetaKeyServerInfo: d.info}
}

// resultMeta is the _meta of a backend's result as vmcp returns it: the
// backend's own keys, its io.modelcontextprotocol/* keys (per hop, e.g.
// its serverInfo) replaced by vmcp's serverInfo.
func (d *Dispatcher) resultMeta(m mcp.Meta) mcp.Meta {
	out := mcpmsg.ForwardMeta(m)
	if out == nil {
		out = make(mcp.Meta, 1)
	}
	delete(out, mcpmsg.UpstreamTTLKey) // the cache guard's, not the backend's
	out[mcp.MetaKeyServerInfo] = d.info
	return out
}

// marshalMRTR marshals a tools/call, prompts/get or resources/read result.
// The SDK writes resultType only when its unexported field is set (from a
// Modern backend's reply); otherwise "resultType":"complete" is spliced in
// (an input_required result always carries its own). A "resultType" member
// nested in a Legacy result's content suppresses the splice: harmless, as an
// absent resultType means "complete".
func marshalMRTR(res any, needsInput bool) ([]byte, error) {
	b, err := json.Marshal(res)
	if err != nil || needsInput || bytes.Contains(b, []byte(`"resultType":"`)) {
		return b, err
	}
	return spliceResultType(b), nil
}

// spliceResultType inserts "resultType":"complete" as the first member of
// the JSON object b.
func spliceResultType(b []byte) []byte {
	const member = `"resultType":"complete"`
	out := make([]byte, 0, len(b)+len(member)+1)
	out = append(out, '{')
	out = append(out, member...)
	if rest := bytes.TrimLeft(b[1:], " \t\r\n"); len(rest) > 0 && rest[0] != '}' {
		out = append(out, ',')
	}
	return append(out, b[1:]...)
}
