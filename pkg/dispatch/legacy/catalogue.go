package legacy

import (
	"crypto/sha256"
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/bulkgc"
)

// registered remembers what was last registered on the SDK server, by
// advertised name or URI, as the digest of its JSON (the catalogue's
// encoding, aggregator.Catalogue.JSON), so sync only touches what changed
// (each Add/Remove makes the SDK send list_changed to every Legacy
// session).
type registered struct {
	tools, prompts, resources, templates map[string][sha256.Size]byte
}

// sync makes the SDK server's registry equal to cat. Calls are routed by
// the aggregator's routing table at call time, never by this registry.
func (d *Dispatcher) sync(cat *aggregator.Catalogue) {
	d.regMu.Lock()
	defer d.regMu.Unlock()
	if d.reg.tools == nil {
		d.reg = registered{tools: map[string][sha256.Size]byte{}, prompts: map[string][sha256.Size]byte{},
			resources: map[string][sha256.Size]byte{}, templates: map[string][sha256.Size]byte{}}
	}
	bulk := bulkRegistration{phase: d.opts.BulkGC.Phase()}
	defer bulk.phase.End()
	tools, enc := cat.Callable() // with tool search listing only its own tools, every tool stays callable
	syncKind(d.reg.tools, tools, enc, func(t *mcp.Tool) string { return t.Name },
		func(t *mcp.Tool) { d.addTool(t); bulk.added() }, d.server.RemoveTools)
	syncKind(d.reg.prompts, cat.Prompts, cat.JSON(aggregator.KindPrompts), func(p *mcp.Prompt) string { return p.Name },
		func(p *mcp.Prompt) { d.server.AddPrompt(p, d.getPrompt) }, d.server.RemovePrompts)
	syncKind(d.reg.resources, cat.Resources, cat.JSON(aggregator.KindResources), func(r *mcp.Resource) string { return r.URI },
		func(r *mcp.Resource) { d.server.AddResource(r, d.readResource) }, d.server.RemoveResources)
	syncKind(d.reg.templates, cat.Templates, cat.JSON(aggregator.KindTemplates), func(t *mcp.ResourceTemplate) string { return t.URITemplate },
		func(t *mcp.ResourceTemplate) { d.server.AddResourceTemplate(t, d.readResource) }, d.server.RemoveResourceTemplates)
	bulk.done()
}

// bulkAdds is how many tool registrations a bulk one collects after: each
// go-sdk AddTool leaves some 50 KB of garbage (its JSON decoder's 32 KB
// buffer per schema remarshal), so registering a backend's thousands of
// tools at once would let the heap grow to many times its live size, and
// the runtime would keep that memory long after.
const bulkAdds = 500

// bulkRegistration counts one sync's tool registrations: every bulkAdds
// it collects the garbage (runtime.GC), and a sync of at least bulkAdds
// hands the freed memory back to the OS at its end (debug.FreeOSMemory).
type bulkRegistration struct {
	n     int
	phase bulkgc.Phase
}

func (b *bulkRegistration) added() {
	b.phase.Add(1) // each go-sdk AddTool leaves ~50 KB of garbage
	if b.n++; b.n%bulkAdds == 0 {
		runtime.GC()
	}
}

func (b *bulkRegistration) done() {
	if b.n >= bulkAdds {
		debug.FreeOSMemory()
	}
}

// syncKind registers (add) the items of want, encoded as enc, that differ
// from have, and removes those of have no longer wanted.
func syncKind[T any](have map[string][sha256.Size]byte, want []T, enc *aggregator.JSONList, key func(T) string, add func(T), remove func(...string)) {
	keep := make(map[string]bool, len(want))
	for i, item := range want {
		k := key(item)
		keep[k] = true
		b, _ := enc.Item(i) // an item that does not encode digests as empty
		sum := sha256.Sum256(b)
		if old, ok := have[k]; ok && old == sum {
			continue
		}
		add(item)
		have[k] = sum
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
