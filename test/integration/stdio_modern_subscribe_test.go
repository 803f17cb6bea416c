package integration

import (
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestSharedSubscriptionOnModernStdioWasRefusedByTheBackend pins the
// shared resource subscription (backends.Manager.SubscribeResource) on a
// stdio backend that speaks 2026-07-28: it went out as
// resources/subscribe, which a Modern server does not have (-32601), so a
// listen stream's resourceSubscriptions were silently not honored. Now
// it is a subscriptions/listen on the control connection, whose
// notifications reach it by subscription id: honored, and the backend's
// resources/updated reaches the listen stream.
func TestSharedSubscriptionOnModernStdioWasRefusedByTheBackend(t *testing.T) {
	t.Parallel()
	v := harness.StartVMCP(t, nil, harness.StdioBackend(t, "local"))
	awaitTools(t, v, "local_touch")
	ls := openListenStream(t, v, `"A"`, map[string]any{"resourceSubscriptions": []string{"mem://note"}})
	require.Equal(t, map[string]any{"resourceSubscriptions": []any{"mem://note"}}, ls.ack, "the backend refused the subscription")

	c := v.Connect(t, modernRevision, nil)
	require.Equal(t, "touched", callText(t, c, "local_touch", ""))
	m := ls.next(t)
	require.Equal(t, "notifications/resources/updated", m["method"])
	p := m["params"].(map[string]any)
	require.Equal(t, "mem://note", p["uri"])
	requireSubscriptionID(t, p, `"A"`)
}

// TestLegacySubscribeOnSharedModernStdioHung pins a Legacy client's
// resources/subscribe to a stdio backend with isolation: shared that
// speaks 2026-07-28: it waited the whole request timeout for an
// acknowledgement that never reached it. The go-sdk server keeps one
// subscription per URI for its one session, which every client shares,
// so per-client subscriptions cannot be held there: the client gets a
// JSON-RPC error naming the backend and why, at once.
func TestLegacySubscribeOnSharedModernStdioHung(t *testing.T) {
	t.Parallel()
	be := harness.StdioBackend(t, "local")
	be.Isolation = config.IsolationShared
	v := harness.StartVMCP(t, nil, be)
	awaitTools(t, v, "local_touch")
	a := v.Connect(t, legacy, nil)
	err := a.Subscribe(ctx(t), &mcp.SubscribeParams{URI: "mem://note"})
	require.Error(t, err)
	e := rpcError(t, err)
	require.Contains(t, e.Message, `"local"`)
	require.Contains(t, e.Message, "isolation: shared")
}
