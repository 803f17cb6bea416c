package wire

import (
	"bytes"
	"encoding/json"
)

// eachMemberStd is EachMember by encoding/json's Decoder (the vmcp_noscan
// build's, StdJSON): the same calls, found by the decoder's offsets.
func eachMemberStd(obj []byte, f func(key, value, member []byte)) error {
	d := json.NewDecoder(bytes.NewReader(obj))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return ErrNotObject
	}
	at := int(d.InputOffset())
	for d.More() {
		start := skipSpace(obj, at)
		if start < len(obj) && obj[start] == ',' {
			start = skipSpace(obj, start+1)
		}
		if _, err := d.Token(); err != nil {
			return ErrNotObject
		}
		keyEnd := int(d.InputOffset())
		var v json.RawMessage
		if err := d.Decode(&v); err != nil {
			return ErrNotObject
		}
		at = int(d.InputOffset())
		f(obj[start:keyEnd], obj[at-len(v):at], obj[start:at])
	}
	if t, err := d.Token(); err != nil || t != json.Delim('}') {
		return ErrNotObject
	}
	return nil
}
