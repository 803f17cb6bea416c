package audit

import (
	"bytes"
	"encoding/json"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/vmcp/vmcp/pkg/wire"
)

// MaxArguments caps the arguments written per record, in bytes of JSON
// after redaction; longer ones are written as a string of their first
// MaxArguments bytes with arguments_truncated.
const MaxArguments = 1024

// MaxField caps each field of a record a client chooses (session and
// listen ids, method, tool and prompt names, resource URI, clientInfo),
// in bytes, cut on a UTF-8 boundary (wire.Clip).
const MaxField = wire.MaxQuoted

// clip caps r's client-chosen fields at MaxField bytes, copied, so a
// queued record holds no request body.
func clip(r *Record) {
	for _, f := range [...]*string{&r.Session, &r.Listen, &r.Method, &r.Tool, &r.Prompt, &r.Resource} {
		if len(*f) > MaxField {
			*f = strings.Clone(wire.Clip(*f))
		}
	}
	if c := r.Client; c != nil && (len(c.Name) > MaxField || len(c.Version) > MaxField) {
		r.Client = &Client{Name: strings.Clone(wire.Clip(c.Name)), Version: strings.Clone(wire.Clip(c.Version))}
	}
}

// Redacted replaces the value of every redacted key.
const Redacted = "[REDACTED]"

// redactor replaces the values of the keys that contain one of its
// entries, both normalised (Normalize), at any depth of a JSON value.
type redactor []string

func newRedactor(keys []string) redactor {
	r := make(redactor, 0, len(keys))
	for _, k := range keys {
		if n := Normalize(k); n != "" {
			r = append(r, n)
		}
	}
	return r
}

// Normalize is a key as redaction compares it: lower case, without "_",
// "-", "." and spaces, so access_token, accessToken, Access-Token and
// "access token" are one key.
func Normalize(key string) string {
	return strings.Map(func(c rune) rune {
		switch c {
		case '_', '-', '.', ' ':
			return -1
		}
		return unicode.ToLower(c)
	}, key)
}

// redacts reports whether key's value is replaced: its normalised form
// contains an entry's (the entry "token" redacts access_token,
// refreshToken and X-Auth-Token).
func (r redactor) redacts(key string) bool {
	if len(r) == 0 {
		return false
	}
	k := Normalize(key)
	for _, e := range r {
		if strings.Contains(k, e) {
			return true
		}
	}
	return false
}

// arguments returns raw redacted and capped (truncated: cut, and returned
// as a JSON string); raw that is not JSON is written as "" with truncated
// (none of it: it could not be redacted).
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
			if r.redacts(k) {
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
