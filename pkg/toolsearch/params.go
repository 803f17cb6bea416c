package toolsearch

import (
	"encoding/json"
	"sort"
)

// maxParams bounds the parameters taken from one input schema.
const maxParams = 64

// ParamsOf returns the top-level properties of a tool's JSON Schema
// inputSchema (a map, json.RawMessage, []byte or anything that marshals to
// an object), sorted by name; a schema it cannot read gives none.
func ParamsOf(schema any) []Param {
	var s struct {
		Properties map[string]struct {
			Description string `json:"description"`
			Title       string `json:"title"`
		} `json:"properties"`
	}
	var raw []byte
	switch v := schema.(type) {
	case nil:
		return nil
	case map[string]any: // a decoded schema: read without marshalling
		return paramsOfMap(v)
	case json.RawMessage:
		raw = v
	case []byte:
		raw = v
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return nil
		}
		raw = b
	}
	if json.Unmarshal(raw, &s) != nil {
		return nil
	}
	out := make([]Param, 0, len(s.Properties))
	for name, p := range s.Properties {
		d := p.Description
		if d == "" {
			d = p.Title
		}
		out = append(out, Param{Name: name, Description: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) > maxParams {
		out = out[:maxParams]
	}
	return out
}

// paramsOfMap is ParamsOf for a schema decoded into maps.
func paramsOfMap(schema map[string]any) []Param {
	props, _ := schema["properties"].(map[string]any)
	out := make([]Param, 0, len(props))
	for name, p := range props {
		m, _ := p.(map[string]any)
		d, _ := m["description"].(string)
		if d == "" {
			d, _ = m["title"].(string)
		}
		out = append(out, Param{Name: name, Description: d})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	if len(out) > maxParams {
		out = out[:maxParams]
	}
	return out
}
