package wire

import (
	"bytes"
	"encoding/json"
	"math"
	"strconv"
)

// IDKey is the value of a JSON-RPC request id as a map key: "s" + the
// string, or "n" + the number in canonical form (7, 7.0 and 7e0 are one
// id). ok is false for an id that is absent, null or not a string or
// number (JSON-RPC 2.0: an id is a string or a number): the one id
// validator.
func IDKey(raw json.RawMessage) (key string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch c := raw[0]; {
	case c == '"':
		if bytes.IndexByte(raw, '\\') < 0 {
			return "s" + string(raw[1:len(raw)-1]), len(raw) >= 2 && raw[len(raw)-1] == '"'
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s" + s, true
	case c == '-' || c >= '0' && c <= '9':
		if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return "n" + strconv.FormatInt(i, 10), true
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || !json.Valid(raw) {
			return "", false
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<62 {
			return "n" + strconv.FormatInt(int64(f), 10), true
		}
		return "n" + strconv.FormatFloat(f, 'g', -1, 64), true
	}
	return "", false
}
