package wire

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The JSON-RPC 2.0 message builders: every message vmcp writes as raw
// bytes is made here.

const header = `{"jsonrpc":"2.0"`

// Request is a request with raw id and params (params nil: none).
func Request(id json.RawMessage, method string, params json.RawMessage) []byte {
	b := make([]byte, 0, len(header)+len(id)+len(method)+len(params)+32)
	b = append(append(append(b, header...), `,"id":`...), id...)
	b = AppendString(append(b, `,"method":`...), method)
	if params != nil {
		b = append(append(b, `,"params":`...), params...)
	}
	return append(b, '}')
}

// RequestFields is a request whose params object has the given raw members.
func RequestFields(id json.RawMessage, method string, params map[string]json.RawMessage) []byte {
	return Request(id, method, Object(params))
}

// Object is the JSON object of the given raw members (in map order).
func Object(members map[string]json.RawMessage) json.RawMessage {
	n := 2
	for k, v := range members {
		n += len(k) + len(v) + 4
	}
	p := make([]byte, 0, n)
	p = append(p, '{')
	first := true
	for k, v := range members {
		if !first {
			p = append(p, ',')
		}
		first = false
		p = append(append(AppendString(p, k), ':'), v...)
	}
	return append(p, '}')
}

// Notification is a notification with raw params (nil: none).
func Notification(method string, params json.RawMessage) []byte {
	b := make([]byte, 0, len(header)+len(method)+len(params)+24)
	b = AppendString(append(append(b, header...), `,"method":`...), method)
	if params != nil {
		b = append(append(b, `,"params":`...), params...)
	}
	return append(b, '}')
}

// Response is a successful response to id with the raw result.
func Response(id, result json.RawMessage) []byte {
	b := make([]byte, 0, len(header)+len(id)+len(result)+20)
	b = append(append(append(b, header...), `,"id":`...), id...)
	return append(append(append(b, `,"result":`...), result...), '}')
}

// AppendResponseHead appends the start of a response to id up to its
// result value: `{"jsonrpc":"2.0","id":ID,"result":`; the caller appends
// the result and a closing '}' (as Response builds it).
func AppendResponseHead(dst []byte, id json.RawMessage) []byte {
	return append(append(append(append(dst, header...), `,"id":`...), id...), `,"result":`...)
}

// ErrorResponse is an error response to id (nil: no id member, for a
// message whose id could not be read); err that is not a *jsonrpc.Error
// is sent as -32603 with its text.
func ErrorResponse(id json.RawMessage, err error) []byte {
	we, ok := err.(*jsonrpc.Error)
	if !ok {
		we = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: err.Error()}
	}
	e, merr := json.Marshal(we)
	if merr != nil {
		e = []byte(`{"code":-32603,"message":"unencodable error"}`)
	}
	b := make([]byte, 0, len(header)+len(id)+len(e)+20)
	b = append(b, header...)
	if id != nil {
		b = append(append(b, `,"id":`...), id...)
	}
	return append(append(append(b, `,"error":`...), e...), '}')
}

// Cancelled is notifications/cancelled for the raw request id, with reason
// ("" for none).
func Cancelled(id json.RawMessage, reason string) []byte {
	p := append([]byte(`{"requestId":`), id...)
	if reason != "" {
		p = AppendString(append(p, `,"reason":`...), reason)
	}
	return Notification("notifications/cancelled", append(p, '}'))
}

// AppendString appends s as a JSON string.
func AppendString(b []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			enc, _ := json.Marshal(s)
			return append(b, enc...)
		}
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}
