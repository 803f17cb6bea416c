package integration

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestRelayNullResultIsAnErrorNotAnEmptySuccess pins a backend answering a
// tools/call with "result": null: the client gets a JSON-RPC error naming
// the backend, not an empty success.
func TestRelayNullResultIsAnErrorNotAnEmptySuccess(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	answerRaw(b, `"result":null`, func(method, name, _ string) bool { return method == "tools/call" && name == "reserved" })
	v := raVMCP(t, nil, []string{"b_reserved"}, b)
	c := connectFlow(t, v, "A", nil)
	res, err := c.call(flowCtx(t), "b_reserved", nil, nil)
	require.Error(t, err, "a null result must not become an empty success (got %+v)", res)
	assert.Contains(t, err.Error(), `"b"`, "the error names the backend")
	assert.Contains(t, err.Error(), "null")
}

// TestRelayErrorNullWithResultGotCode0 pins a backend answering a relayed
// tools/call with "error": null beside its result: the relay read the null
// as an error and the client got code 0 with an empty message; null is no
// error, as on the other paths.
func TestRelayErrorNullWithResultGotCode0(t *testing.T) {
	b, _, _ := raBackend(t, "b", nil, nil)
	answerRaw(b, `"error":null,"result":{"content":[{"type":"text","text":"fine"}]}`, func(method, name, _ string) bool { return method == "tools/call" && name == "reserved" })
	v := raVMCP(t, nil, []string{"b_reserved"}, b)
	c := connectFlow(t, v, "A", nil)
	res, err := c.call(flowCtx(t), "b_reserved", nil, nil)
	require.NoError(t, err)
	require.Len(t, res.Content, 1)
	assert.Equal(t, "fine", res.Content[0].(*mcp.TextContent).Text)
}
