package mcpmsg

import (
	"bytes"
	"encoding/json"

	"github.com/vmcp/vmcp/pkg/wire"
)

// AppendMember appends the object member "key":value to out (value is
// raw JSON).
func AppendMember(out []byte, key string, value []byte) []byte {
	return append(append(wire.AppendString(out, key), ':'), value...)
}

// LegacyResult is a Modern backend's raw result object as a Legacy client
// gets it: without resultType, and with the per-hop io.modelcontextprotocol/*
// keys of its _meta dropped (an emptied _meta goes too); every other member
// byte for byte. A result that is not an object is returned unchanged.
func LegacyResult(res json.RawMessage) json.RawMessage {
	if !bytes.Contains(res, []byte(`"resultType"`)) && !bytes.Contains(res, []byte(reservedMetaPrefix)) {
		return res
	}
	out := make([]byte, 1, len(res))
	out[0] = '{'
	err := wire.EachMember(res, func(key, value, member []byte) {
		switch {
		case wire.KeyIs(key, "resultType"):
			return
		case wire.KeyIs(key, "_meta"):
			if value = ForwardMetaRaw(value); value == nil {
				return
			}
			member = AppendMember(nil, "_meta", value)
		}
		out = append(append(out, member...), ',')
	})
	if err != nil {
		return res
	}
	if len(out) > 1 {
		out = out[:len(out)-1]
	}
	return append(out, '}')
}
