package modern

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/mrtr"
)

// Only elicitation, sampling and roots are taken from the client's
// declaration (roots without listChanged), and the key names the set.
func TestParkCaps(t *testing.T) {
	_, _, ok := parkCaps(map[string]any{"experimental": map[string]any{"x": map[string]any{}}})
	assert.False(t, ok, "nothing a backend could ask for")
	_, _, ok = parkCaps(nil)
	assert.False(t, ok)

	caps, key, ok := parkCaps(map[string]any{
		"roots":       map[string]any{"listChanged": true},
		"elicitation": map[string]any{"form": map[string]any{}},
		"extensions":  map[string]any{"io.x/y": map[string]any{}},
	})
	require.True(t, ok)
	assert.Equal(t, `{"elicitation":{"form":{}},"roots":{}}`, key)
	assert.NotNil(t, caps.Elicitation)
	assert.NotNil(t, caps.Elicitation.Form)
	assert.Nil(t, caps.Sampling)
	assert.Equal(t, &mcp.RootCapabilities{}, caps.RootsV2)
	assert.Nil(t, caps.Extensions)

	_, key2, _ := parkCaps(map[string]any{"elicitation": map[string]any{"form": map[string]any{}}, "roots": map[string]any{}})
	assert.Equal(t, key, key2, "equal sets share sessions")
}

// The direct path's raw input_required result gets the backend's state
// sealed into vmcp's; a complete result passes byte for byte.
func TestSealRaw(t *testing.T) {
	d := &Dispatcher{state: mrtr.NewCodec(bytes.Repeat([]byte("k"), 32))}
	c := &mrtrCall{method: "tools/call", name: "m_ask", backend: "m", target: "ask"}
	complete := []byte(`{"content":[{"type":"text","text":"input_required"}],"resultType":"complete"}`)
	out, err := d.sealRaw(c, complete)
	require.NoError(t, err)
	assert.Equal(t, complete, out)

	out, err = d.sealRaw(c, []byte(`{"resultType":"input_required","inputRequests":{},"requestState":"be-1"}`))
	require.NoError(t, err)
	var res struct{ RequestState string }
	require.NoError(t, json.Unmarshal(out, &res))
	st, err := d.state.Open(res.RequestState)
	require.NoError(t, err)
	assert.Equal(t, mrtr.State{Method: "tools/call", Name: "m_ask", Backend: "m", Target: "ask", Inner: "be-1"}, st)
}

// A backend result carrying only requestState stays input_required (the
// SDK server would recompute it as complete), with vmcp's sealed state.
func TestFinishKeepsStateOnlyInputRequired(t *testing.T) {
	d := &Dispatcher{state: mrtr.NewCodec(bytes.Repeat([]byte("k"), 32)), info: json.RawMessage(`{"name":"vmcp"}`)}
	c := &mrtrCall{method: "tools/call", name: "m_t", backend: "m", target: "t"}
	var res mcp.CallToolResult
	require.NoError(t, json.Unmarshal([]byte(`{"resultType":"input_required","requestState":"later"}`), &res))
	out, err := d.finish(c, &res, false)
	require.NoError(t, err)
	var got map[string]any
	require.NoError(t, json.Unmarshal(out, &got))
	assert.Equal(t, "input_required", got["resultType"])
	assert.NotContains(t, got, "inputRequests")
	st, err := d.state.Open(got["requestState"].(string))
	require.NoError(t, err)
	assert.Equal(t, "later", st.Inner)
}
