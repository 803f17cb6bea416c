package vmcp_test

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
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

// addCounterPair adds counter_inc (adds one, returns the count) and
// counter_get (returns it), and the prompt counter_peek (the count as its
// message), all kept per backend session.
func addCounterPair(s *mcp.Server) {
	var mu sync.Mutex
	counts := map[string]int{}
	count := func(id string, inc int) string {
		mu.Lock()
		defer mu.Unlock()
		counts[id] += inc
		return strconv.Itoa(counts[id])
	}
	for name, inc := range map[string]int{"counter_inc": 1, "counter_get": 0} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: count(req.Session.ID(), inc)}}}, nil
			})
	}
	s.AddPrompt(&mcp.Prompt{Name: "counter_peek"}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: count(req.Session.ID(), 0)}}}}, nil
	})
}

// TestModernPrincipalsDoNotShareBackendState pins issue 28's
// cross-principal state on every Modern path to a Legacy HTTP backend:
// with auth on, alice's three Modern counter_inc calls gave 1, 2, 3 and
// bob's Modern counter_get (or prompt) then read 3, since calls of clients
// that can be asked (and every prompts/get) ran on pooled backend sessions
// keyed by capabilities, not by principal. Bob must read 0.
func TestModernPrincipalsDoNotShareBackendState(t *testing.T) {
	idp := authtest.Start(t, audience)
	for name, opts := range map[string]*mcp.ClientOptions{
		"cannot be asked": {Capabilities: &mcp.ClientCapabilities{}},
		"declares elicitation": {Capabilities: &mcp.ClientCapabilities{},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
				return &mcp.ElicitResult{Action: "decline"}, nil
			}},
	} {
		t.Run(name, func(t *testing.T) {
			b := harness.StartBackend(t, "alpha", harness.Stateful, addCounterPair)
			v := harness.StartVMCP(t, func(c *config.Config) {
				c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: audience, RequiredScopes: []string{"mcp:tools"},
					ResourceName: "test vmcp", Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
			}, b.Config())
			connect := func(sub string) *mcp.ClientSession {
				t.Helper()
				hc := &http.Client{Transport: &authtest.Bearer{Token: idp.Token(t, sub, "mcp:tools")}}
				cs, err := mcp.NewClient(&mcp.Implementation{Name: sub, Version: "test"}, opts).
					Connect(ctx10(t), &mcp.StreamableClientTransport{Endpoint: v.URL, HTTPClient: hc}, nil)
				require.NoError(t, err)
				t.Cleanup(func() { _ = cs.Close() })
				require.GreaterOrEqual(t, cs.InitializeResult().ProtocolVersion, "2026-07-28", "%s is not Modern", sub)
				return cs
			}
			call := func(cs *mcp.ClientSession, tool string) string {
				t.Helper()
				res, err := cs.CallTool(ctx10(t), &mcp.CallToolParams{Name: "alpha_" + tool, Arguments: map[string]any{}})
				require.NoError(t, err)
				return harness.Text(t, res)
			}
			alice, bob := connect("alice"), connect("bob")
			for _, want := range []string{"1", "2", "3"} {
				require.Equal(t, want, call(alice, "counter_inc"))
			}
			require.Equal(t, "0", call(bob, "counter_get"), "bob's call ran on alice's backend session")
			pr, err := bob.GetPrompt(ctx10(t), &mcp.GetPromptParams{Name: "alpha_counter_peek"})
			require.NoError(t, err)
			require.Equal(t, "0", pr.Messages[0].Content.(*mcp.TextContent).Text, "bob's prompt ran on alice's backend session")
			require.Equal(t, "3", call(alice, "counter_get"))
		})
	}
}
