package wire

import (
	"bytes"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// legacyRevisions are the Legacy revisions the go-sdk serves: its
// SupportedProtocolVersions but the Modern ones, and "" (a request
// without MCP-Protocol-Version is 2025-03-26, the spec's default). Built
// once; never written after.
var legacyRevisions = func() map[string]bool {
	set := map[string]bool{"": true}
	for _, v := range mcp.SupportedProtocolVersions() {
		if !IsModern(v) {
			set[v] = true
		}
	}
	return set
}()

// IsLegacyRevision reports whether v, an MCP-Protocol-Version header
// value, names a Legacy revision the go-sdk serves ("" included, as
// 2025-03-26): the Legacy dispatcher relays requests at those and leaves
// any other to the go-sdk handler's answer.
func IsLegacyRevision(v string) bool { return legacyRevisions[v] }

// DecodeSingle decodes body, one JSON-RPC 2.0 message, into the zero
// Message m (Decode); it reports false for a batch (an array), a body that
// is not a JSON object, malformed JSON, or a "jsonrpc" member other than
// "2.0" (IsJSONRPC).
func DecodeSingle(body []byte, m *Message) bool {
	t := bytes.TrimLeft(body, " \t\r\n")
	return len(t) > 0 && t[0] == '{' && Decode(body, m) == nil && IsJSONRPC(m.JSONRPC)
}
