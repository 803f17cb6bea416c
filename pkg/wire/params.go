package wire

import (
	"encoding/base64"
	"encoding/json"
	"math"
	"strconv"
	"strings"
)

// ParamHeaderPrefix starts the header that mirrors an x-mcp-header
// argument of a tools/call (2026-07-28 Streamable HTTP, SEP-2243).
const ParamHeaderPrefix = "Mcp-Param-"

// ParamHeaders are the Mcp-Param-* headers of a tools/call to a Modern
// backend, as the go-sdk client sets them: for each property of schema
// (the tool's input schema as a JSON object, any nesting depth) annotated
// with x-mcp-header, the argument at its path in params' "arguments" when
// present and a string, boolean or integer within ±(2^53-1), encoded by
// HeaderValue. nil when there is none.
func ParamHeaders(schema map[string]any, params json.RawMessage) map[string]string {
	bindings := ParamBindings(schema)
	if len(bindings) == 0 {
		return nil
	}
	var p struct {
		Arguments map[string]json.RawMessage `json:"arguments"`
	}
	if json.Unmarshal(params, &p) != nil || p.Arguments == nil {
		return nil
	}
	var out map[string]string
	for _, b := range bindings {
		v, ok := headerArg(p.Arguments, b.Path)
		if !ok {
			continue
		}
		if out == nil {
			out = map[string]string{}
		}
		out[ParamHeaderPrefix+b.Header] = HeaderValue(v)
	}
	return out
}

// ParamBinding is one x-mcp-header annotation of a tool's input schema:
// the argument's path and the header name after ParamHeaderPrefix.
type ParamBinding struct {
	Path   []string
	Header string
}

// ParamBindings are the x-mcp-header annotations under schema's
// properties, at any nesting depth (nil: none).
func ParamBindings(schema map[string]any) []ParamBinding { return paramBindings(schema, nil, nil) }

// paramBindings appends the annotations under schema's properties to out.
func paramBindings(schema map[string]any, prefix []string, out []ParamBinding) []ParamBinding {
	props, _ := schema["properties"].(map[string]any)
	for name, raw := range props {
		prop, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		path := append(append([]string(nil), prefix...), name)
		if h, ok := prop["x-mcp-header"].(string); ok && h != "" {
			out = append(out, ParamBinding{Path: path, Header: h})
		}
		out = paramBindings(prop, path, out)
	}
	return out
}

// LookupArg is the raw argument at path in nested argument objects; ok
// is false when a step is absent or not an object.
func LookupArg(args map[string]json.RawMessage, path []string) (json.RawMessage, bool) {
	cur, ok := args[path[0]]
	for _, part := range path[1:] {
		var obj map[string]json.RawMessage
		if !ok || json.Unmarshal(cur, &obj) != nil {
			return nil, false
		}
		cur, ok = obj[part]
	}
	return cur, ok
}

// headerArg is the argument at path as a header's text: a string, a
// boolean, or an integer within ±(2^53-1); ok is false for anything else
// (absent, null, another type).
func headerArg(args map[string]json.RawMessage, path []string) (string, bool) {
	cur, ok := LookupArg(args, path)
	var v any
	if !ok || json.Unmarshal(cur, &v) != nil {
		return "", false
	}
	switch v := v.(type) {
	case string:
		return v, true
	case bool:
		return strconv.FormatBool(v), true
	case float64:
		const maxSafe = 1<<53 - 1
		if math.IsNaN(v) || math.IsInf(v, 0) || v != math.Trunc(v) || v > maxSafe || v < -maxSafe {
			return "", false
		}
		return strconv.FormatInt(int64(v), 10), true
	}
	return "", false
}

// HeaderValue is s as an MCP header value (SEP-2243): unchanged when it is
// printable ASCII without leading or trailing space or tab, else (or when
// it has the sentinel's shape) "=?base64?" + its standard base64 + "?=".
func HeaderValue(s string) string {
	enc := strings.HasPrefix(s, "=?base64?") && strings.HasSuffix(s, "?=")
	if n := len(s); n > 0 && (s[0] == ' ' || s[0] == '\t' || s[n-1] == ' ' || s[n-1] == '\t') {
		enc = true
	}
	for i := 0; i < len(s) && !enc; i++ {
		enc = s[i] < 0x20 || s[i] > 0x7e
	}
	if !enc {
		return s
	}
	return "=?base64?" + base64.StdEncoding.EncodeToString([]byte(s)) + "?="
}
