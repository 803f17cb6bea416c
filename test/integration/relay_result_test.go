package integration

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRelayNullResultIsAnErrorNotAnEmptySuccess pins a backend answering a
// tools/call with "result": null: the client gets a JSON-RPC error naming
// the backend, not an empty success.
func TestRelayNullResultIsAnErrorNotAnEmptySuccess(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	h := b.HTTP.Config.Handler
	b.HTTP.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && m.Method == "tools/call" && m.Params.Name == "reserved" {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,"result":null}`))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
	v := raVMCP(t, nil, []string{"b_reserved"}, b)
	c := connectFlow(t, v, "A", nil)
	res, err := c.call(flowCtx(t), "b_reserved", nil, nil)
	require.Error(t, err, "a null result must not become an empty success (got %+v)", res)
	assert.Contains(t, err.Error(), `"b"`, "the error names the backend")
	assert.Contains(t, err.Error(), "null")
}
