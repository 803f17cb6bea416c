package vmcp_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// Pages are assembled from each item's JSON as its catalogue snapshot
// encoded it once (issue 15). These tests pin that cache to its snapshot
// and to the view: a page never shows a replaced catalogue's encoding, nor
// another principal's items.

// describe replaces the backend's tool name with one described as desc
// (the backend sends tools/list_changed; vmcp relists and swaps its
// catalogue).
func describe(s *mcp.Server, name, desc string) {
	s.AddTool(&mcp.Tool{Name: name, Description: desc, InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: name}}}, nil
		})
}

// walkDescribed walks cs's tools: their names, and the description of want.
func walkDescribed(ctx context.Context, cs *mcp.ClientSession, want string) (names []string, desc string, err error) {
	for tool, err := range cs.Tools(ctx, nil) {
		if err != nil {
			return names, desc, err
		}
		names = append(names, tool.Name)
		if tool.Name == want {
			desc = tool.Description
		}
	}
	return names, desc, nil
}

// A page served from an encoding cache kept past its catalogue would show
// the old description after the swap; one shared across views would show
// the user the admin's tools. Both principals walk concurrently on both
// revisions, before and after the swap.
func TestListPagesFollowTheCatalogueSwapAndThePrincipalsViewConcurrently(t *testing.T) {
	idp := authtest.Start(t, audience)
	be := viewsBackend(t)
	v := protectedViews(t, idp, be)
	admin, user := principals(t, idp)
	type client struct {
		who  string
		cs   *mcp.ClientSession
		note chan string
		want []string
	}
	var clients []client
	for rev, version := range revisions {
		for who, token := range map[string]string{"admin": admin, "user": user} {
			ch := make(chan string, 16)
			cs, _, err := connect(t, v.URL, token, version, notes(ch))
			require.NoError(t, err)
			want := map[string][]string{"admin": allTools, "user": allTools[:5]}[who]
			clients = append(clients, client{who + " " + rev, cs, ch, want})
		}
	}
	walkAll := func(desc string) {
		t.Helper()
		var wg sync.WaitGroup
		errs := make([]error, len(clients))
		for i, c := range clients {
			wg.Go(func() {
				for range 5 {
					names, got, err := walkDescribed(ctx10(t), c.cs, "alpha_pub0000")
					if err == nil && (!slices.Equal(names, c.want) || got != desc) {
						err = fmt.Errorf("listed %v with alpha_pub0000 described %q, want %v and %q", names, got, c.want, desc)
					}
					if err != nil {
						errs[i] = fmt.Errorf("%s: %w", c.who, err)
						return
					}
				}
			})
		}
		wg.Wait()
		for _, err := range errs {
			require.NoError(t, err)
		}
	}
	walkAll("")
	require.Eventually(t, func() bool { return v.Server.ModernListens() == 2 }, 10*time.Second, 5*time.Millisecond, "the Modern listen streams are open")
	describe(be.Server, "pub0000", "changed <&> once")
	for _, c := range clients {
		require.Equal(t, "tools", next(t, c.note, c.who), "every view shows alpha_pub0000")
	}
	walkAll("changed <&> once")
	describe(be.Server, "pub0000", "changed twice")
	for _, c := range clients {
		require.Equal(t, "tools", next(t, c.note, c.who))
	}
	walkAll("changed twice")
}

// Without a policy every principal's view is the whole catalogue (its
// encoded lists served as they are): a swap shows on the next page.
func TestListPagesWithoutPolicyFollowTheCatalogueSwap(t *testing.T) {
	be := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddTools(s, "pub", 5) })
	v := harness.StartVMCP(t, viewsConfig, be.Config())
	for rev, version := range revisions {
		t.Run(rev, func(t *testing.T) {
			ch := make(chan string, 16)
			cs, _, err := connect(t, v.URL, "", version, notes(ch))
			require.NoError(t, err)
			_, desc, err := walkDescribed(ctx10(t), cs, "alpha_pub0003")
			require.NoError(t, err)
			require.NotEqual(t, "now described ("+rev+")", desc)
			if rev == "modern" {
				require.Eventually(t, func() bool { return v.Server.ModernListens() == 1 }, 10*time.Second, 5*time.Millisecond)
			}
			describe(be.Server, "pub0003", "now described ("+rev+")")
			require.Equal(t, "tools", next(t, ch, rev))
			names, desc, err := walkDescribed(ctx10(t), cs, "alpha_pub0003")
			require.NoError(t, err)
			require.Equal(t, allTools[:5], names)
			require.Equal(t, "now described ("+rev+")", desc)
		})
	}
}
