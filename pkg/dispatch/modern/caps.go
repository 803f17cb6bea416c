package modern

import (
	"bytes"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// parkCaps returns the client's declared elicitation, sampling and roots
// capabilities (nothing else: a backend never sees more than the client
// declared) as the capabilities of a backend session, with a key naming
// them; false when the client declared none of them, so the backend cannot
// ask it (upstream.Request.Asks). Roots are offered without
// listChanged: a Modern client sends no roots/list_changed to relay.
// client is the request's clientCapabilities: a map, or raw JSON
// (decodeCallTool), decoded only if it may declare one of them.
func parkCaps(client any) (*mcp.ClientCapabilities, string, bool) {
	declared, _ := client.(map[string]any)
	if raw, ok := client.(json.RawMessage); ok {
		if !mayAsk(raw) {
			return nil, "", false
		}
		declared = decodeCaps(raw)
	}
	return parkDeclared(declared)
}

// decodeCaps decodes raw clientCapabilities (a valid object: validate
// checked it).
func decodeCaps(raw json.RawMessage) map[string]any {
	var declared map[string]any
	_ = json.Unmarshal(raw, &declared)
	return declared
}

// parkDeclared is parkCaps on decoded clientCapabilities.
func parkDeclared(declared map[string]any) (*mcp.ClientCapabilities, string, bool) {
	sub := map[string]any{}
	for _, k := range []string{"elicitation", "sampling", "roots"} {
		if v, ok := declared[k]; ok && v != nil {
			sub[k] = v
		}
	}
	if len(sub) == 0 {
		return nil, "", false
	}
	if _, ok := sub["roots"]; ok {
		sub["roots"] = map[string]any{}
	}
	b, err := json.Marshal(sub) // map keys sort: one key per capability set
	if err != nil {
		return nil, "", false
	}
	caps := &mcp.ClientCapabilities{}
	if err := json.Unmarshal(b, caps); err != nil {
		return nil, "", false
	}
	if _, ok := sub["roots"]; ok {
		caps.RootsV2 = &mcp.RootCapabilities{}
	}
	return caps, string(b), true
}

// mayAsk reports whether raw clientCapabilities may declare elicitation,
// sampling or roots (a key spelled with escapes is decoded to be sure).
func mayAsk(raw json.RawMessage) bool {
	return bytes.IndexByte(raw, '\\') >= 0 || bytes.Contains(raw, []byte(`"elicitation"`)) ||
		bytes.Contains(raw, []byte(`"sampling"`)) || bytes.Contains(raw, []byte(`"roots"`))
}
