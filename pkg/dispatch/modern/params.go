package modern

import (
	"encoding/json"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

// callParams are the params of a Modern tools/call: the SDK's, with the
// request's _meta also kept as raw JSON, from which the direct path builds
// the backend's _meta without encoding the client's values again.
type callParams struct {
	mcp.CallToolParamsRaw
	rawMeta json.RawMessage // params._meta as sent (re-encoded if json.Unmarshal decoded it); nil: none
}

// decodeCallTool decodes tools/call params as json.Unmarshal into
// mcp.CallToolParamsRaw does (same values, same errors), without
// reflection for the common shape, except that the object and array values
// of _meta stay raw (json.RawMessage; consumers see objects through
// isObject). Keys that differ from a member only by case or have escapes,
// duplicate members, and strings with escapes are left to json.Unmarshal.
func decodeCallTool(raw json.RawMessage) (mcp.Params, error) {
	p := &callParams{}
	if len(raw) == 0 {
		return p, nil
	}
	if !wire.StdJSON && scanCallTool(raw, p) {
		return p, nil
	}
	*p = callParams{}
	if err := json.Unmarshal(raw, &p.CallToolParamsRaw); err != nil {
		return p, err
	}
	if p.Meta != nil {
		p.rawMeta, _ = json.Marshal(p.Meta) // a decoded map always encodes
	}
	return p, nil
}

// callMembers are the members of tools/call params json.Unmarshal fills.
var callMembers = [...]string{"_meta", "name", "arguments", "inputResponses", "requestState"}

// scanCallTool is decodeCallTool's scan; false leaves raw to json.Unmarshal.
func scanCallTool(raw json.RawMessage, p *callParams) bool {
	ok, seen := true, 0
	err := wire.EachMember(raw, func(key, value, _ []byte) {
		k := key[1 : len(key)-1]
		i := memberIndex(k)
		if !ok || i < 0 {
			ok = ok && !wire.MemberLike(k, callMembers[:]...)
			return
		}
		if seen&(1<<i) != 0 {
			ok = false
			return
		}
		seen |= 1 << i
		switch i {
		case 0:
			ok = scanMeta(value, p)
		case 1:
			ok = wire.PlainString(value, &p.Name)
		case 2:
			p.Arguments = json.RawMessage(value)
		case 3:
			ok = json.Unmarshal(value, &p.InputResponses) == nil
		case 4:
			ok = wire.PlainString(value, &p.RequestState)
		}
	})
	return err == nil && ok
}

// memberIndex is the index in callMembers of a key's exact text, or -1.
func memberIndex(k []byte) int {
	for i, m := range callMembers {
		if string(k) == m {
			return i
		}
	}
	return -1
}

// scanMeta fills p.Meta and p.rawMeta from a raw _meta value (null: none).
func scanMeta(value []byte, p *callParams) bool {
	if string(value) == "null" {
		return true
	}
	if value[0] != '{' {
		return false
	}
	meta := make(mcp.Meta, 4)
	ok := true
	err := wire.EachMember(value, func(key, v, _ []byte) {
		k := key[1 : len(key)-1]
		if !ok || !wire.PlainKey(k) {
			ok = false
			return
		}
		var val any
		if val, ok = shallowValue(v); ok {
			meta[string(k)] = val // the last of duplicate keys wins, as json.Unmarshal's
		}
	})
	if err != nil || !ok {
		return false
	}
	p.Meta, p.rawMeta = meta, json.RawMessage(value)
	return true
}

// shallowValue is a _meta value as json.Unmarshal into any decodes it,
// except objects and arrays, which stay raw; false for what it leaves to
// json.Unmarshal (strings with escapes or non-ASCII bytes, huge numbers).
func shallowValue(v []byte) (any, bool) {
	switch v[0] {
	case '{', '[':
		return json.RawMessage(v), true
	case 'n':
		return nil, true
	case 't':
		return true, true
	case 'f':
		return false, true
	case '"':
		var s string
		return s, wire.PlainString(v, &s)
	}
	f, err := strconv.ParseFloat(string(v), 64)
	return f, err == nil
}

// isObject reports whether a decoded _meta value is a JSON object: a map
// (json.Unmarshal) or raw JSON (decodeCallTool).
func isObject(v any) bool {
	switch v := v.(type) {
	case map[string]any:
		return true
	case json.RawMessage:
		return len(v) > 0 && v[0] == '{'
	}
	return false
}

// objectJSON is a _meta object value as JSON (nil if v is not an object).
func objectJSON(v any) json.RawMessage {
	switch v := v.(type) {
	case json.RawMessage:
		if len(v) > 0 && v[0] == '{' {
			return v
		}
	case map[string]any:
		b, _ := json.Marshal(v)
		return b
	}
	return nil
}
