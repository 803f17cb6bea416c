package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode/utf8"
)

// MaxArguments caps the arguments written per record, in bytes of JSON
// after redaction; longer ones are written as a string of their first
// MaxArguments bytes with arguments_truncated.
const MaxArguments = 1024

// Redacted replaces the value of every redacted key.
const Redacted = "[REDACTED]"

// redactor replaces the values of its keys (compared case-insensitively)
// at any depth of a JSON value.
type redactor map[string]bool

func newRedactor(keys []string) redactor {
	r := make(redactor, len(keys))
	for _, k := range keys {
		r[strings.ToLower(k)] = true
	}
	return r
}

// arguments returns raw redacted and capped (truncated: cut, and returned
// as a JSON string); raw that is not JSON is written as a string too.
func (r redactor) arguments(raw json.RawMessage) (out json.RawMessage, truncated bool) {
	var v any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return capped(nil), true // not JSON: nothing is written of it
	}
	b, err := json.Marshal(r.walk(v))
	if err != nil {
		return capped(nil), true
	}
	if len(b) <= MaxArguments {
		return b, false
	}
	return capped(b), true
}

// walk returns v with the redacted keys' values replaced, at any depth.
func (r redactor) walk(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if r[strings.ToLower(k)] {
				x[k] = Redacted
			} else {
				x[k] = r.walk(e)
			}
		}
	case []any:
		for i, e := range x {
			x[i] = r.walk(e)
		}
	}
	return v
}

// capped is b's first MaxArguments bytes (cut at a rune boundary) as a
// JSON string.
func capped(b []byte) json.RawMessage {
	if len(b) > MaxArguments {
		b = b[:MaxArguments]
		for len(b) > 0 && !utf8.Valid(b) {
			b = b[:len(b)-1]
		}
	}
	s, _ := json.Marshal(string(b))
	return s
}
