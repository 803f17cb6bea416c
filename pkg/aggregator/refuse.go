package aggregator

import (
	"context"
	"crypto/sha256"
	"encoding/json"
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
// whether it accepts a tool; serialised, as registering mutates it. Its
// verdict depends on the tool's schemas alone (a bad name is only
// logged), so verdicts are kept by schema digest (at most
// maxVerdicts, then forgotten at once): a backend relisting its tools
// (list_changed), or offering many tools of one schema, is checked once
// per distinct schema, not once per tool (each check makes the SDK
// allocate tens of KB).
var registryCheck = struct {
	sync.Mutex
	s        *mcp.Server
	verdicts map[[sha256.Size]byte]error
}{s: mcp.NewServer(&mcp.Implementation{Name: "vmcp-registry-check"}, &mcp.ServerOptions{Logger: slog.New(slog.DiscardHandler)})}

// maxVerdicts bounds registryCheck.verdicts.
const maxVerdicts = 4096

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
// catalogue gives a tool without one) on the check server and removes it,
// or answers as it did for the same schemas before.
func registryAccepts(t *mcp.Tool) error {
	cp := *t
	if cp.InputSchema == nil {
		cp.InputSchema = map[string]any{"type": "object"}
	}
	key, keyed := schemaDigest(&cp)
	registryCheck.Lock()
	defer registryCheck.Unlock()
	if err, ok := registryCheck.verdicts[key]; keyed && ok {
		return err
	}
	err := register(&cp)
	if keyed {
		if registryCheck.verdicts == nil || len(registryCheck.verdicts) >= maxVerdicts {
			registryCheck.verdicts = map[[sha256.Size]byte]error{}
		}
		registryCheck.verdicts[key] = err
	}
	return err
}

// schemaDigest is the digest of t's input and output schemas as JSON
// (false if they do not marshal: then the registry must judge).
func schemaDigest(t *mcp.Tool) ([sha256.Size]byte, bool) {
	b, err := json.Marshal([2]any{t.InputSchema, t.OutputSchema})
	if err != nil {
		return [sha256.Size]byte{}, false
	}
	return sha256.Sum256(b), true
}

// register adds t to the check server and removes it (registryCheck
// held), turning the registry's panic into an error.
func register(t *mcp.Tool) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("the MCP server registry refuses it: %v", r)
		}
	}()
	registryCheck.s.AddTool(t, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) { return nil, nil })
	registryCheck.s.RemoveTools(t.Name)
	return nil
}
