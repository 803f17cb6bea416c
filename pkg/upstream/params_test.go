package upstream_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// TestDoSendsMcpParamHeaders: a tools/call of a tool whose input schema
// mirrors an argument in a header (x-mcp-header) reaches a Modern backend
// with its Mcp-Param-* header, as the go-sdk client sends it (without it a
// go-sdk server refuses the call, -32020).
func TestDoSendsMcpParamHeaders(t *testing.T) {
	t.Parallel()
	sb := startScripted(t, true, func(w http.ResponseWriter, r *http.Request, m *wire.Message, _ int) {
		if got := r.Header.Get("Mcp-Param-Region"); got != "eu-west" {
			http.Error(w, "Mcp-Param-Region is "+got, http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(wire.Response(m.ID, okResult))
	})
	c, _, mgr := core(t, sb.URL, 30*time.Second)
	b, err := mgr.Backend("b")
	if err != nil {
		t.Fatal(err)
	}
	tool := &mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"}}}}
	req := call("alice")
	req.Target = &upstream.Target{Backend: b, Name: "t", Tool: tool, Via: upstream.ViaDirect}
	req.Params = json.RawMessage(`{"name":"t","arguments":{"region":"eu-west"}}`)
	st, err := c.Do(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, res, err := drain(t, st); err != nil || string(res) != string(okResult) {
		t.Fatalf("result %s, error %v", res, err)
	}
}
