package mcpmsg

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HeaderParams reports whether tool's input schema mirrors an argument in
// an Mcp-Param-* header (an x-mcp-header annotation at any depth of its
// properties; 2026-07-28 Streamable HTTP). A nil tool has none.
func HeaderParams(tool *mcp.Tool) bool {
	if tool == nil || tool.InputSchema == nil {
		return false
	}
	return hasHeaderParam(SchemaMap(tool.InputSchema))
}

// SchemaMap returns an input schema as a JSON object: the map itself, or
// another Go type encoded and decoded (nil if it is not an object).
func SchemaMap(schema any) map[string]any {
	if m, ok := schema.(map[string]any); ok {
		return m
	}
	return encodedSchema(schema)
}

// encodedSchema is SchemaMap's slow path, apart so the map it decodes into
// escapes only there.
func encodedSchema(schema any) map[string]any {
	var m map[string]any
	if b, err := json.Marshal(schema); err == nil {
		_ = json.Unmarshal(b, &m)
	}
	return m
}

func hasHeaderParam(schema map[string]any) bool {
	props, _ := schema["properties"].(map[string]any)
	for _, raw := range props {
		prop, ok := raw.(map[string]any)
		if !ok {
			continue
		}
		if h, ok := prop["x-mcp-header"].(string); ok && h != "" {
			return true
		}
		if hasHeaderParam(prop) {
			return true
		}
	}
	return false
}
