package mcpmsg

import (
	"encoding/json"
	"testing"
)

// TestModernResultFieldsReachedLegacyClients pins LegacyResult: resultType
// and the backend's reserved _meta keys go, everything else stays as sent.
func TestModernResultFieldsReachedLegacyClients(t *testing.T) {
	for in, want := range map[string]string{
		`{"content":[],"resultType":"complete"}`: `{"content":[]}`,
		`{"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"b"}},"isError":true}`: `{"isError":true}`,
		`{"_meta":{"io.modelcontextprotocol/serverInfo":{},"k":1},"content":[ 1 ]}`:                            `{"_meta":{"k":1},"content":[ 1 ]}`,
		`{"content":[]}`: `{"content":[]}`,
	} {
		if got := string(LegacyResult(json.RawMessage(in))); got != want {
			t.Errorf("LegacyResult(%s) = %s, want %s", in, got, want)
		}
	}
}
