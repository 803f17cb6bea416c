// Package pin is tool-definition pinning (security.tool_changes): the
// first definition vmcp sees of each backend tool is pinned by its hash,
// on this node or in Redis (first writer wins), and a later different
// definition under the same name is warned about, withheld until an
// operator accepts it, or re-pinned, by mode. The aggregator asks Admit
// which of a backend's tools enter the catalogue.
package pin

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// definition is what a pin covers: the tool's name, description, input
// and output schema and annotations (not its title, icons or _meta).
type definition struct {
	Name         string               `json:"name"`
	Description  string               `json:"description"`
	InputSchema  any                  `json:"inputSchema"`
	OutputSchema any                  `json:"outputSchema"`
	Annotations  *mcp.ToolAnnotations `json:"annotations"`
}

// Hash is the SHA-256, in hex, of t's definition in canonical JSON:
// object keys sorted at every depth, numbers in their shortest form.
// A definition that cannot be encoded hashes its name alone with a marker.
func Hash(t *mcp.Tool) string {
	raw, err := json.Marshal(definition{t.Name, t.Description, t.InputSchema, t.OutputSchema, t.Annotations})
	if err == nil && !(decoded(t.InputSchema) && decoded(t.OutputSchema)) {
		raw, err = canonical(raw)
	}
	if err != nil {
		return sum([]byte("unencodable\x00" + t.Name))
	}
	return sum(raw)
}

// decoded reports whether a schema is as a JSON decoder makes it (absent,
// or a map[string]any of decoded values), which json.Marshal already
// writes canonically: a backend's listed tools are (the go-sdk client
// decodes them); other types are re-encoded first.
func decoded(schema any) bool {
	switch schema.(type) {
	case nil, map[string]any:
		return true
	}
	return false
}

// canonical re-encodes JSON with sorted object keys (encoding/json sorts
// map keys) and numbers kept as encoded (json.Number).
func canonical(raw []byte) ([]byte, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return json.Marshal(v)
}

func sum(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
