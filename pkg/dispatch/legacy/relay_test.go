package legacy

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/wire"
)

// A Legacy client must never see 2026-07-28-only result fields or the
// backend's reserved _meta keys; results without them pass byte for byte.
func TestLegacyResultDropsModernFieldsAndReservedMeta(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"plain result passes unchanged", `{"content":[{"type":"text","text":"hi"}]}`, `{"content":[{"type":"text","text":"hi"}]}`},
		{"resultType and ttlMs dropped", `{"content":[],"resultType":"complete","ttlMs":5,"cacheScope":"public"}`, `{"content":[]}`},
		{"reserved meta key dropped, others kept", `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{},"app":1}}`, `{"_meta":{"app":1},"content":[]}`},
		{"meta left empty is dropped", `{"content":[],"_meta":{"io.modelcontextprotocol/serverInfo":{}}}`, `{"content":[]}`},
	} {
		t.Run(c.name, func(t *testing.T) {
			require.JSONEq(t, c.want, string(legacyResult(json.RawMessage(c.in))))
			if c.in == c.want {
				require.Equal(t, c.want, string(legacyResult(json.RawMessage(c.in))))
			}
		})
	}
}

// The relayed request must be valid JSON with every params field kept
// and names needing escapes escaped.
func TestRequestBodyKeepsParamsAndEscapesNames(t *testing.T) {
	params := map[string]json.RawMessage{
		"name":      wire.AppendString(nil, "we\"ird\\name\u00e9"),
		"arguments": json.RawMessage(`{"a":[1,2]}`),
		"task":      json.RawMessage(`{"ttl":5}`),
	}
	body := wire.RequestFields([]byte(`"vmcp-7"`), "tools/call", params)
	var got struct {
		ID     string         `json:"id"`
		Method string         `json:"method"`
		Params map[string]any `json:"params"`
	}
	require.NoError(t, json.Unmarshal(body, &got), "%s", body)
	require.Equal(t, "vmcp-7", got.ID)
	require.Equal(t, "tools/call", got.Method)
	require.Equal(t, "we\"ird\\name\u00e9", got.Params["name"])
	require.Equal(t, map[string]any{"a": []any{1.0, 2.0}}, got.Params["arguments"])
	require.Contains(t, got.Params, "task", "unknown params fields reach the backend")
}

// The relay takes only POSTs the go-sdk handler would accept.
func TestRelayableRefusesWhatTheSDKHandlerRefuses(t *testing.T) {
	ok := func(mut func(h map[string]string)) bool {
		h := map[string]string{"Content-Type": "application/json; charset=utf-8", "Accept": "application/json, text/event-stream", "Mcp-Protocol-Version": "2025-11-25"}
		mut(h)
		r := httptest.NewRequest("POST", "/mcp", strings.NewReader("{}"))
		for k, v := range h {
			if v != "" {
				r.Header.Set(k, v)
			}
		}
		return relayable(r)
	}
	require.True(t, ok(func(map[string]string) {}))
	require.True(t, ok(func(h map[string]string) { h["Accept"] = "*/*" }))
	require.True(t, ok(func(h map[string]string) { h["Mcp-Protocol-Version"] = "" }))
	require.False(t, ok(func(h map[string]string) { h["Accept"] = "application/json" }), "no text/event-stream")
	require.False(t, ok(func(h map[string]string) { h["Content-Type"] = "text/plain" }))
	require.False(t, ok(func(h map[string]string) { h["Mcp-Protocol-Version"] = "1999-01-01" }))
	require.False(t, ok(func(h map[string]string) { h["Last-Event-ID"] = "x" }))
}
