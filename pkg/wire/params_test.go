package wire

import (
	"encoding/json"
	"testing"
)

// ParamHeaders builds what the go-sdk client builds for x-mcp-header
// arguments: nested paths, the three primitive types, base64 where a
// value is not a plain header value, nothing for absent, null or other
// values.
func TestParamHeadersAsTheSDKClientBuildsThem(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
		"n":      map[string]any{"type": "integer", "x-mcp-header": "N"},
		"on":     map[string]any{"type": "boolean", "x-mcp-header": "On"},
		"gone":   map[string]any{"type": "string", "x-mcp-header": "Gone"},
		"nested": map[string]any{"type": "object", "properties": map[string]any{
			"city": map[string]any{"type": "string", "x-mcp-header": "City"},
		}},
		"plain": map[string]any{"type": "string"},
	}}
	for _, c := range []struct {
		name, args string
		want       map[string]string
	}{
		{"primitives", `{"region":"eu-west","n":42,"on":true,"plain":"x"}`, map[string]string{"Mcp-Param-Region": "eu-west", "Mcp-Param-N": "42", "Mcp-Param-On": "true"}},
		{"nested and encoded", `{"nested":{"city":"Zürich"},"region":" lead"}`, map[string]string{"Mcp-Param-City": "=?base64?WsO8cmljaA==?=", "Mcp-Param-Region": "=?base64?IGxlYWQ=?="}},
		{"null, fraction and object skipped", `{"region":null,"n":1.5,"on":{}}`, nil},
		{"no arguments", ``, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			params := json.RawMessage(`{"name":"t"}`)
			if c.args != "" {
				params = json.RawMessage(`{"name":"t","arguments":` + c.args + `}`)
			}
			got := ParamHeaders(schema, params)
			if len(got) != len(c.want) {
				t.Fatalf("got %v, want %v", got, c.want)
			}
			for k, v := range c.want {
				if got[k] != v {
					t.Fatalf("%s = %q, want %q (all: %v)", k, got[k], v, got)
				}
			}
		})
	}
}
