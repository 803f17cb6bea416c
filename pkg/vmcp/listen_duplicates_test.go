package vmcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestListenNamingAPerPrincipalResourceOftenSubscribedItOnceEach: a
// subscriptions/listen naming one per-principal resource 50 times sent the
// backend 50 resources/subscribe on the stream's own session (Legacy) and
// acknowledged the URI 50 times (both revisions); a URI named again is now
// held, subscribed and acknowledged once.
func TestListenNamingAPerPrincipalResourceOftenSubscribedItOnceEach(t *testing.T) {
	t.Parallel()
	for _, modern := range []bool{false, true} {
		t.Run(fmt.Sprint("modern=", modern), func(t *testing.T) {
			t.Parallel()
			idp := outboundIdP(t, func(string) bool { return false })
			url, _, held := startDocBackend(t, tokenChecker(t, idp, vaultAud), modern)
			v := docVMCP(t, idp, openBackend(t), url)
			tok, err := idp.ClientToken(t.Context(), "alice", "")
			require.NoError(t, err)
			_, _, err = connect(t, v.URL, tok, revisions["modern"], &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
			require.NoError(t, err)
			uris := make([]string, 50)
			for i := range uris {
				uris[i] = "doc://note"
			}
			ack := ownListenAck(t, v.URL, tok, map[string]any{"resourceSubscriptions": uris})
			require.Equal(t, []any{"doc://note"}, ack["resourceSubscriptions"], "acknowledged")
			if !modern {
				require.Equal(t, 1, held("alice"), "resources/subscribe sent to the backend")
			}
		})
	}
}

// ownListenAck opens a raw subscriptions/listen asking for notif with tok and
// returns its acknowledgement's notifications; the stream ends with the test.
func ownListenAck(t *testing.T, url, tok string, notif map[string]any) map[string]any {
	t.Helper()
	b, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen", "params": map[string]any{
		"notifications": notif,
		"_meta":         map[string]any{mcp.MetaKeyProtocolVersion: "2026-07-28", mcp.MetaKeyClientCapabilities: map[string]any{}}}})
	require.NoError(t, err)
	hdr := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen", "Authorization": "Bearer " + tok}
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s := openSSE(t, post(t, url, string(b), hdr).WithContext(ctx))
	ack := s.next(t, "notifications/subscriptions/acknowledged")
	return ack["params"].(map[string]any)["notifications"].(map[string]any)
}
