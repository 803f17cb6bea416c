package vmcp_test

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestModernCallsOfTwoPrincipalsShareBackendState pins issue 28's
// cross-principal state: with auth on, alice's three Modern calls of a
// per-session counter on a stateful Legacy HTTP backend gave 1, 2, 3, and
// bob's Modern call then saw her count, since Modern calls of every
// principal ran on one pooled backend session. Each principal now has its
// own backend session: bob starts at 1, alice keeps hers.
func TestModernCallsOfTwoPrincipalsShareBackendState(t *testing.T) {
	idp := authtest.Start(t, audience)
	v, _ := protected(t, idp, nil)
	count := func(cs *mcp.ClientSession) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "alpha_count", Arguments: map[string]any{}})
		require.NoError(t, err)
		return harness.Text(t, res)
	}
	connect := func(sub string) *mcp.ClientSession {
		t.Helper()
		hc := &http.Client{Transport: &authtest.Bearer{Token: idp.Token(t, sub, "mcp:tools")}}
		client := mcp.NewClient(&mcp.Implementation{Name: sub, Version: "test"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: v.URL, HTTPClient: hc}, nil)
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close() })
		require.GreaterOrEqual(t, cs.InitializeResult().ProtocolVersion, "2026-07-28", "%s is not Modern", sub)
		return cs
	}
	alice, bob := connect("alice"), connect("bob")
	for _, want := range []string{"1", "2", "3"} {
		require.Equal(t, want, count(alice))
	}
	require.Equal(t, "1", count(bob), "bob's call ran on alice's backend session")
	require.Equal(t, "4", count(alice))
}
