package integration

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestLegacyCompletionAndSubscriptionOnStdioTookTheGoSDKSession pins a
// Legacy client's completion/complete to a stdio backend, which went out
// on the client's go-sdk session instead of the one sender
// (upstream.Core.Do, ViaRelay; the rule is pinned by pkg/upstream's
// TestTransportRule): end to end, the completion answers; and on the same
// sessions resources/updated reaches exactly the subscribed session until
// it unsubscribes (subscriptions still take the go-sdk session).
func TestLegacyCompletionAndSubscriptionOnStdioTookTheGoSDKSession(t *testing.T) {
	t.Parallel()
	v := harness.StartVMCP(t, nil, harness.StdioBackend(t, "local"))
	awaitTools(t, v, "local_touch")
	updated := map[string]chan string{"a": make(chan string, 16), "b": make(chan string, 16)}
	conn := func(k string) *mcp.ClientSession {
		return v.Connect(t, legacy, &mcp.ClientOptions{ResourceUpdatedHandler: func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) {
			updated[k] <- r.Params.URI
		}})
	}
	a, b := conn("a"), conn("b")

	res, err := a.Complete(ctx(t), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "local_greet"},
		Argument: mcp.CompleteParamsArgument{Name: "name", Value: "al"}})
	require.NoError(t, err)
	assert.Equal(t, []string{"alpha", "alpha2"}, res.Completion.Values)

	require.NoError(t, a.Subscribe(ctx(t), &mcp.SubscribeParams{URI: "mem://note"}))
	require.Equal(t, "touched", callText(t, a, "local_touch", ""))
	require.Equal(t, "mem://note", recvURI(t, updated["a"]), "the subscriber was not told")
	require.Equal(t, "touched", callText(t, b, "local_touch", ""))
	require.NoError(t, b.Subscribe(ctx(t), &mcp.SubscribeParams{URI: "mem://note"}))
	require.Equal(t, "touched", callText(t, b, "local_touch", ""))
	require.Equal(t, "mem://note", recvURI(t, updated["b"]))
	assert.Empty(t, updated["b"], "b was told of a change before it subscribed")
	require.NoError(t, a.Unsubscribe(ctx(t), &mcp.UnsubscribeParams{URI: "mem://note"}))
	require.Equal(t, "touched", callText(t, a, "local_touch", ""))
	assert.Empty(t, updated["a"], "a was told after it unsubscribed")

	m := v.Server.Metrics().BackendRequests
	for _, method := range []string{"completion/complete", "resources/subscribe", "resources/unsubscribe"} {
		assert.Positive(t, testutil.ToFloat64(m.WithLabelValues("local", method, upstream.RevisionLegacy, "ok")), method)
	}
}

// recvURI waits up to stateWait for a resources/updated URI on ch.
func recvURI(t *testing.T, ch <-chan string) string {
	t.Helper()
	select {
	case uri := <-ch:
		return uri
	case <-time.After(stateWait):
		t.Fatal("no notifications/resources/updated arrived")
		return ""
	}
}
