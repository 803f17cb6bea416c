package legacy

import (
	"encoding/json"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
)

// registered remembers what was last registered on the SDK server, by
// advertised name or URI, as JSON, so sync only touches what changed (each
// Add/Remove makes the SDK send list_changed to every Legacy session).
type registered struct {
	tools, prompts, resources, templates map[string]string
}

// sync makes the SDK server's registry equal to cat. Calls are routed by
// the aggregator's routing table at call time, never by this registry.
func (d *Dispatcher) sync(cat *aggregator.Catalogue) {
	d.regMu.Lock()
	defer d.regMu.Unlock()
	if d.reg.tools == nil {
		d.reg = registered{tools: map[string]string{}, prompts: map[string]string{}, resources: map[string]string{}, templates: map[string]string{}}
	}
	syncKind(d.reg.tools, cat.Tools, func(t *mcp.Tool) string { return t.Name },
		func(t *mcp.Tool) { d.addTool(t) }, d.server.RemoveTools)
	syncKind(d.reg.prompts, cat.Prompts, func(p *mcp.Prompt) string { return p.Name },
		func(p *mcp.Prompt) { d.server.AddPrompt(p, d.getPrompt) }, d.server.RemovePrompts)
	syncKind(d.reg.resources, cat.Resources, func(r *mcp.Resource) string { return r.URI },
		func(r *mcp.Resource) { d.server.AddResource(r, d.readResource) }, d.server.RemoveResources)
	syncKind(d.reg.templates, cat.Templates, func(t *mcp.ResourceTemplate) string { return t.URITemplate },
		func(t *mcp.ResourceTemplate) { d.server.AddResourceTemplate(t, d.readResource) }, d.server.RemoveResourceTemplates)
}

func syncKind[T any](have map[string]string, want []T, key func(T) string, add func(T), remove func(...string)) {
	keep := make(map[string]bool, len(want))
	for _, item := range want {
		k := key(item)
		keep[k] = true
		b, _ := json.Marshal(item)
		if have[k] == string(b) {
			continue
		}
		add(item)
		have[k] = string(b)
	}
	var gone []string
	for k := range have {
		if !keep[k] {
			gone = append(gone, k)
			delete(have, k)
		}
	}
	if len(gone) > 0 {
		remove(gone...)
	}
}

// addTool registers t, recovering from the SDK's panics on schemas it
// rejects (a backend's bad tool must not take vmcp down).
func (d *Dispatcher) addTool(t *mcp.Tool) {
	defer func() {
		if r := recover(); r != nil {
			d.log.Error("tool rejected by the MCP server registry; not advertised", "tool", t.Name, "error", fmt.Sprint(r))
		}
	}()
	d.server.AddTool(t, d.callTool)
}
