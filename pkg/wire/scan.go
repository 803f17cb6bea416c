package wire

import (
	"bytes"
	"encoding/json"
	"errors"
)

// Raw JSON scanning for the hot paths: the members of an object are found
// by their byte spans, with no reflection and no copies. The input must be
// valid JSON (json.Valid, or already decoded by encoding/json).

// ErrNotObject is returned by EachMember for input that is not one JSON
// object.
var ErrNotObject = errors.New("not a JSON object")

// EachMember calls f for every member of the JSON object obj with the raw
// key token (quotes included), the raw value and the member's whole text
// from the key through the value, in order (duplicates included).
func EachMember(obj []byte, f func(key, value, member []byte)) error {
	if StdJSON {
		return eachMemberStd(obj, f)
	}
	return eachMember(obj, f)
}

// eachMember is EachMember's hand-written scan.
func eachMember(obj []byte, f func(key, value, member []byte)) error {
	i := skipSpace(obj, 0)
	if i >= len(obj) || obj[i] != '{' {
		return ErrNotObject
	}
	i = skipSpace(obj, i+1)
	if i < len(obj) && obj[i] == '}' {
		return nil
	}
	for i < len(obj) {
		start := i
		keyEnd, err := skipValue(obj, i)
		if err != nil || obj[start] != '"' {
			return ErrNotObject
		}
		i = skipSpace(obj, keyEnd)
		if i >= len(obj) || obj[i] != ':' {
			return ErrNotObject
		}
		vStart := skipSpace(obj, i+1)
		end, err := skipValue(obj, vStart)
		if err != nil {
			return err
		}
		f(obj[start:keyEnd], obj[vStart:end], obj[start:end])
		i = skipSpace(obj, end)
		if i < len(obj) && obj[i] == ',' {
			i = skipSpace(obj, i+1)
			continue
		}
		if i < len(obj) && obj[i] == '}' {
			return nil
		}
		return ErrNotObject
	}
	return ErrNotObject
}

// skipValue returns the index just past the JSON value starting at b[i].
func skipValue(b []byte, i int) (int, error) {
	if i >= len(b) {
		return 0, ErrNotObject
	}
	switch b[i] {
	case '"':
		for j := i + 1; j < len(b); j++ {
			switch b[j] {
			case '\\':
				j++
			case '"':
				return j + 1, nil
			}
		}
		return 0, ErrNotObject
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				end, err := skipValue(b, j)
				if err != nil {
					return 0, err
				}
				j = end - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1, nil
				}
			}
		}
		return 0, ErrNotObject
	}
	j := i
scan:
	for ; j < len(b); j++ {
		switch b[j] {
		case ',', '}', ']', ' ', '\t', '\r', '\n':
			break scan
		}
	}
	if j == i {
		return 0, ErrNotObject
	}
	return j, nil
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// KeyIs reports whether the raw key token tok names key.
func KeyIs(tok []byte, key string) bool {
	if len(tok) == len(key)+2 && string(tok[1:len(tok)-1]) == key {
		return true
	}
	return bytes.IndexByte(tok, '\\') >= 0 && UnquoteKey(tok) == key
}

// UnquoteKey decodes a raw key token as encoding/json does (escapes and
// invalid UTF-8, rare in keys, take the slow path).
func UnquoteKey(tok []byte) string {
	if PlainKey(tok[1 : len(tok)-1]) {
		return string(tok[1 : len(tok)-1])
	}
	var s string
	_ = json.Unmarshal(tok, &s)
	return s
}
