package pin

import (
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/config"
)

// benchTools is a backend's list of n tools with a small schema each.
func benchTools(n int) []*mcp.Tool {
	out := make([]*mcp.Tool, n)
	for i := range out {
		out[i] = &mcp.Tool{Name: fmt.Sprintf("tool_%d", i), Description: "does thing " + fmt.Sprint(i),
			InputSchema: map[string]any{"type": "object", "properties": map[string]any{
				"q": map[string]any{"type": "string", "description": "the query"}, "n": map[string]any{"type": "number", "maximum": 100.0}}}}
	}
	return out
}

// BenchmarkUpdate is one backend's relisting of 1,000 unchanged tools
// into the aggregator, without and with the pin gate (pin: what pinning
// adds to each inventory update).
func BenchmarkUpdate(b *testing.B) {
	tools := benchTools(1000)
	for _, gated := range []bool{false, true} {
		b.Run(fmt.Sprintf("pin=%v", gated), func(b *testing.B) {
			a := aggregator.New(aggregator.Policy{Strategy: "prefix", PrefixFormat: "{backend}_{name}"}, nil)
			if gated {
				p := New(Options{Mode: config.ToolChangesDeny})
				defer p.Close()
				a.SetGate(p)
			}
			for b.Loop() {
				a.Update(aggregator.Inventory{Backend: "x", Tools: tools})
			}
		})
	}
}

// BenchmarkAdmit is the gate alone on the same relisting.
func BenchmarkAdmit(b *testing.B) {
	tools := benchTools(1000)
	p := New(Options{Mode: config.ToolChangesDeny})
	defer p.Close()
	for b.Loop() {
		p.Admit("x", tools)
	}
}

// BenchmarkHash is one tool's hash.
func BenchmarkHash(b *testing.B) {
	t := benchTools(1)[0]
	for b.Loop() {
		Hash(t)
	}
}
