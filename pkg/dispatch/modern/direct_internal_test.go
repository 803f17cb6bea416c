package modern

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRewriteResult(t *testing.T) {
	d := &Dispatcher{info: json.RawMessage(`{"name":"vmcp","version":"1"}`)}
	info := map[string]any{"name": "vmcp", "version": "1"}
	cases := []struct {
		name, in string
		want     map[string]any
	}{
		{"empty object", `{}`, map[string]any{"resultType": "complete", "_meta": map[string]any{mcp.MetaKeyServerInfo: info}}},
		{"backend serverInfo replaced, own keys kept",
			`{"content":[{"type":"text","text":"hi"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"be"},"com.example/x":1}}`,
			map[string]any{"content": []any{map[string]any{"type": "text", "text": "hi"}}, "resultType": "complete",
				"_meta": map[string]any{mcp.MetaKeyServerInfo: info, "com.example/x": float64(1)}}},
		{"input_required kept verbatim",
			`{"resultType":"input_required","inputRequests":{"a":{"method":"elicitation/create","params":{}}},"requestState":"s1","content":null}`,
			map[string]any{"resultType": "input_required", "inputRequests": map[string]any{"a": map[string]any{"method": "elicitation/create", "params": map[string]any{}}},
				"requestState": "s1", "content": nil, "_meta": map[string]any{mcp.MetaKeyServerInfo: info}}},
		{"whitespace, escapes and tricky strings",
			" {\n \"isError\" : true ,\"content\":[{\"text\":\"}]{\\\"\\\\\"}] , \"\\u005fmeta\" : { \"io.modelcontextprotocol\\/logLevel\":\"x\", \"k\\\"q\" : [1,{\"a\":\"]\"}] } }\n",
			map[string]any{"isError": true, "content": []any{map[string]any{"text": "}]{\"\\"}}, "resultType": "complete",
				"_meta": map[string]any{mcp.MetaKeyServerInfo: info, "k\"q": []any{float64(1), map[string]any{"a": "]"}}}}},
		{"meta null", `{"_meta":null,"n":-1.5e3}`, map[string]any{"n": -1500.0, "resultType": "complete", "_meta": map[string]any{mcp.MetaKeyServerInfo: info}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			out, err := d.rewriteResult(json.RawMessage(c.in))
			require.NoError(t, err)
			var got map[string]any
			require.NoError(t, json.Unmarshal(out, &got), "output %s", out)
			assert.Equal(t, c.want, got, "output %s", out)
		})
	}
	for _, bad := range []string{`[]`, `"x"`, `null`, `{"a":}`, `{"a" 1}`, `{"a":1`} {
		_, err := d.rewriteResult(json.RawMessage(bad))
		assert.Error(t, err, "input %s", bad)
	}
}
