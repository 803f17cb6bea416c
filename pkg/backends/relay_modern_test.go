package backends

import (
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestRelayedModernMetaLackedWhatASessionHeld pins what a request relayed on
// a Modern session adds to the client's _meta (2026-07-28: no session holds
// version, capabilities, client info or log level), keeping the client's
// own keys; a Legacy session's _meta is passed unchanged, and a _meta that
// is not an object is refused.
func TestRelayedModernMetaLackedWhatASessionHeld(t *testing.T) {
	b := &Backend{info: &mcp.Implementation{Name: "vmcp", Version: "1.2"}}
	modern := &RawSession{b: b, version: "2026-07-28", modern: true}
	caps := json.RawMessage(`{"elicitation":{}}`)
	for _, meta := range []string{"", `{}`, ` { "progressToken" : 7 } `} {
		out, err := modern.RequestMeta(json.RawMessage(meta), caps, "debug")
		if err != nil {
			t.Fatalf("_meta %q: %v", meta, err)
		}
		var got map[string]any
		if err := json.Unmarshal(out, &got); err != nil {
			t.Fatalf("_meta %q gave invalid JSON %s: %v", meta, out, err)
		}
		if got[mcp.MetaKeyProtocolVersion] != "2026-07-28" || got[mcp.MetaKeyLogLevel] != "debug" ||
			got[mcp.MetaKeyClientInfo].(map[string]any)["name"] != "vmcp" || got[mcp.MetaKeyClientCapabilities].(map[string]any)["elicitation"] == nil {
			t.Errorf("_meta %q became %s", meta, out)
		}
		if meta != "" && meta != "{}" && got["progressToken"] != 7.0 {
			t.Errorf("_meta %q lost the client's progressToken: %s", meta, out)
		}
	}
	out, err := modern.RequestMeta(nil, caps, "")
	var got map[string]any
	if err != nil || json.Unmarshal(out, &got) != nil {
		t.Fatalf("no _meta, no log level: %s, %v", out, err)
	}
	if _, ok := got[mcp.MetaKeyLogLevel]; ok {
		t.Errorf("no log level set, yet _meta carries one: %s", out)
	}
	for _, bad := range []string{`5`, `"x"`, `[1]`, `{"a":`} {
		if _, err := modern.RequestMeta(json.RawMessage(bad), caps, ""); err == nil {
			t.Errorf("_meta %s accepted", bad)
		}
	}
	legacy := &RawSession{b: b, version: "2025-11-25"}
	if out, err := legacy.RequestMeta(json.RawMessage(`{"a":1}`), caps, "debug"); err != nil || string(out) != `{"a":1}` {
		t.Errorf("a Legacy session's _meta changed: %s, %v", out, err)
	}
}

func TestNameHeaderValue(t *testing.T) {
	for in, want := range map[string]string{
		"echo":         "echo",
		"test://café":  "test://café",
		"a b":          "a b",
		"":             "",
		" lead":        "=?base64?IGxlYWQ=?=",
		"trail\t":      "=?base64?dHJhaWwJ?=",
		"=?base64?x?=": "=?base64?PT9iYXNlNjQ/eD89?=",
		"line\nbreak":  "=?base64?bGluZQpicmVhaw==?=",
		"del\x7f":      "=?base64?ZGVsfw==?=",
	} {
		if got := nameHeaderValue(in); got != want {
			t.Errorf("nameHeaderValue(%q) = %q, want %q", in, got, want)
		}
	}
}
