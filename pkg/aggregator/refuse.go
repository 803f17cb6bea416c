package aggregator

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Withheld is an item of a backend's inventory kept out of the catalogue,
// and why (for logs and the operator's view).
type Withheld struct {
	Kind    Kind
	Backend string
	Name    string // the backend's own name
	Reason  string
}

// registryCheck is a go-sdk server used only to ask its tool registry
// whether it accepts a tool; serialised, as registering mutates it.
var registryCheck = struct {
	sync.Mutex
	s *mcp.Server
}{s: mcp.NewServer(&mcp.Implementation{Name: "vmcp-registry-check"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})}

// refuseInvalid returns inv without the tools the go-sdk server registry
// refuses (it panics on an input schema that is not an object of type
// "object", or a schema that does not marshal), and those tools. The
// Legacy dispatcher lists tools through that registry, so a tool it
// refuses must not be routable or listed anywhere: one routing table.
// inv itself is not mutated.
func refuseInvalid(inv Inventory) (Inventory, []Withheld) {
	var refused []Withheld
	kept := inv.Tools[:0:0]
	for _, t := range inv.Tools {
		if err := registryAccepts(t); err != nil {
			refused = append(refused, Withheld{Kind: KindTools, Backend: inv.Backend, Name: t.Name, Reason: err.Error()})
			continue
		}
		kept = append(kept, t)
	}
	if len(refused) > 0 {
		inv.Tools = kept
	}
	return inv, refused
}

// registryAccepts registers a copy of t (with the default input schema the
// catalogue gives a tool without one) on the check server and removes it.
func registryAccepts(t *mcp.Tool) (err error) {
	cp := *t
	if cp.InputSchema == nil {
		cp.InputSchema = map[string]any{"type": "object"}
	}
	registryCheck.Lock()
	defer registryCheck.Unlock()
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the MCP server registry refuses it: %v", r)
		}
	}()
	registryCheck.s.AddTool(&cp, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	registryCheck.s.RemoveTools(cp.Name)
	return nil
}
