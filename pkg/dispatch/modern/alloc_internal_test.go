package modern

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestModernCallWithoutAsksAllocatedCapabilities: a call whose client
// declares no elicitation, sampling or roots decoded nothing, yet
// parkCaps allocated a map for them on every call.
func TestModernCallWithoutAsksAllocatedCapabilities(t *testing.T) {
	caps := any(json.RawMessage(`{"experimental":{}}`))
	n := testing.AllocsPerRun(100, func() {
		if _, _, ok := parkCaps(caps); ok {
			t.Fatal("no capability to ask with, yet parked")
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per call; want none", n)
	}
}

// TestModernCallWithoutParamHeadersCollectedBindings: a tool without
// x-mcp-header annotations had its argument paths collected (one slice
// per property) on every call.
func TestModernCallWithoutParamHeadersCollectedBindings(t *testing.T) {
	tool := &mcp.Tool{Name: "echo", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"text": map[string]any{"type": "string"}, "n": map[string]any{"type": "integer"}}}}
	r, _ := http.NewRequest(http.MethodPost, "http://vmcp/mcp", nil)
	rq := &request{r: r}
	args := json.RawMessage(`{"text":"hi","n":1}`)
	n := testing.AllocsPerRun(100, func() {
		if jerr := checkParamHeaders(rq, tool, args); jerr != nil {
			t.Fatal(jerr)
		}
	})
	if n != 0 {
		t.Fatalf("%v allocations per call; want none", n)
	}
}
