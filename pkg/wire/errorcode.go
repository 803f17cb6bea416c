package wire

import (
	"bytes"
	"encoding/json"
)

// maxErrorScan bounds the message ErrorCode decodes: error responses are
// small, and a larger message is a result.
const maxErrorScan = 64 << 10

// ErrorCode returns the code of the JSON-RPC error response in b: one
// write of a response, a JSON body or an SSE event (its first data line).
// ok is false when b holds no error response (a result, a notification,
// a request, or a message over 64 KiB).
func ErrorCode(b []byte) (code int64, ok bool) {
	if len(b) > 0 && b[0] != '{' { // an SSE event
		i := bytes.Index(b, []byte("data:"))
		if i < 0 {
			return 0, false
		}
		b = bytes.TrimLeft(b[i+len("data:"):], " ")
		if j := bytes.IndexByte(b, '\n'); j >= 0 {
			b = b[:j]
		}
	}
	if len(b) == 0 || b[0] != '{' || len(b) > maxErrorScan || !bytes.Contains(b, []byte(`"error"`)) {
		return 0, false
	}
	var m struct {
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int64 `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(b, &m) != nil || m.Error == nil || m.Result != nil {
		return 0, false
	}
	return m.Error.Code, true
}
