package integration

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRelayNullResultIsAnErrorNotAnEmptySuccess pins a backend answering a
// tools/call with "result": null: the client gets a JSON-RPC error naming
// the backend, not an empty success.
func TestRelayNullResultIsAnErrorNotAnEmptySuccess(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	answerNullTo(b, func(method, name, _ string) bool { return method == "tools/call" && name == "reserved" })
	v := raVMCP(t, nil, []string{"b_reserved"}, b)
	c := connectFlow(t, v, "A", nil)
	res, err := c.call(flowCtx(t), "b_reserved", nil, nil)
	require.Error(t, err, "a null result must not become an empty success (got %+v)", res)
	assert.Contains(t, err.Error(), `"b"`, "the error names the backend")
	assert.Contains(t, err.Error(), "null")
}
