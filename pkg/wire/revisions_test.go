package wire

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The relay's revision list was a hand copy of the go-sdk's: a revision
// the SDK adds would be left to the go-sdk handler instead of relayed.
// Every Legacy revision the SDK supports is one, no Modern one is, and
// neither is a revision the SDK does not know.
func TestLegacyRevisionsAreTheSDKsLegacyOnes(t *testing.T) {
	t.Parallel()
	for _, v := range mcp.SupportedProtocolVersions() {
		if got := IsLegacyRevision(v); got == IsModern(v) {
			t.Errorf("IsLegacyRevision(%q) = %v", v, got)
		}
	}
	for v, want := range map[string]bool{"": true, LatestLegacy: true, FirstModern: false, "2023-01-01": false, "x": false} {
		if got := IsLegacyRevision(v); got != want {
			t.Errorf("IsLegacyRevision(%q) = %v, want %v", v, got, want)
		}
	}
}

// DecodeSingle takes exactly one JSON-RPC 2.0 message.
func TestDecodeSingleTakesOneJSONRPC2Message(t *testing.T) {
	t.Parallel()
	for body, want := range map[string]bool{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"}`:   true,
		" \r\n\t{\"jsonrpc\":\"2.0\",\"method\":\"x\"}":    true,
		`[{"jsonrpc":"2.0","id":1,"method":"tools/call"}]`: false, // a batch
		`{"jsonrpc":"1.0","id":1,"method":"tools/call"}`:   false,
		`{"id":1,"method":"tools/call"}`:                   false,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call"`:    false,
		`"jsonrpc"`: false,
		``:          false,
	} {
		var m Message
		if got := DecodeSingle([]byte(body), &m); got != want {
			t.Errorf("DecodeSingle(%q) = %v, want %v", body, got, want)
		}
	}
}
