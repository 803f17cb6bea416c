package mcpmsg

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// Reserved io.modelcontextprotocol/ keys never cross a hop; raw _meta
// without them is passed as is.
func TestForwardMetaRawDropsReservedKeysOnly(t *testing.T) {
	in := json.RawMessage(`{"progressToken":1}`)
	require.Equal(t, string(in), string(ForwardMetaRaw(in)))
	require.JSONEq(t, `{"app":"x"}`, string(ForwardMetaRaw(json.RawMessage(`{"app":"x","io.modelcontextprotocol/protocolVersion":"2026-07-28"}`))))
	require.Nil(t, ForwardMetaRaw(json.RawMessage(`{"io.modelcontextprotocol/clientInfo":{}}`)))
}
