package wire

import (
	"encoding/json"
	"strings"
)

// Decode fills the zero Message m from b exactly as json.Unmarshal(b, m)
// does (same result, same errors), without reflection: id, params, result
// and error alias b instead of being copied, so b must not change while m
// is used. The rare shapes its scan does not cover (a key that differs from
// a member name only by case, or has escapes; jsonrpc or method not a plain
// ASCII string; a message that is not an object) are left to json.Unmarshal.
func Decode(b []byte, m *Message) error {
	if StdJSON || !json.Valid(b) {
		return json.Unmarshal(b, m) // its syntax error
	}
	if decodeMembers(b, m) {
		return nil
	}
	*m = Message{} // what the scan filled in before it gave up
	return json.Unmarshal(b, m)
}

// decodeMembers is Decode's scan of valid JSON; false leaves the message
// to json.Unmarshal.
func decodeMembers(b []byte, m *Message) bool {
	ok := true
	err := EachMember(b, func(key, value, _ []byte) {
		if !ok {
			return
		}
		switch k := string(key[1 : len(key)-1]); k {
		case "jsonrpc":
			if string(value) == `"2.0"` {
				m.JSONRPC = "2.0" // no copy for the one valid value
				return
			}
			ok = PlainString(value, &m.JSONRPC)
		case "method":
			ok = PlainString(value, &m.Method)
		case "id":
			m.ID = value
		case "params":
			m.Params = value
		case "result":
			m.Result = value
		case "error":
			m.Error = value
		default:
			ok = !MemberLike(key[1:len(key)-1], messageMembers[:]...)
		}
	})
	return err == nil && ok
}

// PlainString stores a JSON string without escapes or non-ASCII bytes in
// s (null leaves s as it is, as json.Unmarshal does); false for any other
// value.
func PlainString(v []byte, s *string) bool {
	if string(v) == "null" {
		return true
	}
	if len(v) < 2 || v[0] != '"' {
		return false
	}
	if !PlainKey(v[1 : len(v)-1]) {
		return false
	}
	*s = string(v[1 : len(v)-1])
	return true
}

// messageMembers are the members of Message json.Unmarshal fills.
var messageMembers = [...]string{"jsonrpc", "method", "id", "params", "result", "error"}

// MemberLike reports whether json.Unmarshal might match a raw key's text
// (quotes removed) to a struct member named in names: it has escapes or
// non-ASCII bytes, or is a name up to case. A scan that matches names
// exactly leaves the other keys it reports to json.Unmarshal.
func MemberLike(k []byte, names ...string) bool {
	if !PlainKey(k) {
		return true
	}
	for _, name := range names {
		if len(k) == len(name) && strings.EqualFold(string(k), name) {
			return true
		}
	}
	return false
}

// DecodeObject returns the members of the JSON object b by name, exactly as
// json.Unmarshal into a map[string]json.RawMessage does (same result, same
// errors; the last of duplicate names wins), but the values alias b. Input
// that is not an object (null gives a nil map) is left to json.Unmarshal.
func DecodeObject(b []byte) (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if i := skipSpace(b, 0); StdJSON || !json.Valid(b) || b[i] != '{' {
		return m, json.Unmarshal(b, &m)
	}
	m = make(map[string]json.RawMessage, 4)
	err := EachMember(b, func(key, value, _ []byte) {
		m[UnquoteKey(key)] = value
	})
	return m, err
}

// PlainKey reports whether a raw key's or string's text (quotes removed)
// is its value: no escapes, only ASCII.
func PlainKey(k []byte) bool {
	for _, c := range k {
		if c == '\\' || c >= 0x80 {
			return false
		}
	}
	return true
}
