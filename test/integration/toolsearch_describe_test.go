package integration

// Tool search ranks by a backend's description (issue 31): the one its
// server gives in its initialize result, or the operator's in the config.

import (
	"context"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// describedBackend serves one tool, list_items, whose name and description
// say nothing of its domain, under serverInfo info and instructions.
func describedBackend(t *testing.T, info *mcp.Implementation, instructions string, stateless bool) config.Backend {
	t.Helper()
	srv := mcp.NewServer(info, &mcp.ServerOptions{Instructions: instructions})
	srv.AddTool(&mcp.Tool{Name: "list_items", Description: "List the items.", InputSchema: flowSchema},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return flowResult("%s", info.Name), nil
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: stateless}))
	t.Cleanup(hs.Close)
	return config.Backend{Name: info.Name, URL: hs.URL, Transport: config.TransportStreamableHTTP}
}

// TestToolSearchRanksByTheBackendsDescription: three backends with the same
// undescriptive tool are told apart by their descriptions: serverInfo's
// description (a Legacy backend), its instructions (a Modern one), and
// the operator's description in the config, which wins over the
// backend's own and follows a reload; on both client revisions.
func TestToolSearchRanksByTheBackendsDescription(t *testing.T) {
	t.Parallel()
	kube := describedBackend(t, &mcp.Implementation{Name: "kube", Version: "1",
		Description: "Manage Kubernetes clusters: pods, deployments and namespaces."}, "", false)
	recipes := describedBackend(t, &mcp.Implementation{Name: "recipes", Version: "1"},
		"Use this server to browse a cookbook of recipes and ingredients.", true)
	flights := describedBackend(t, &mcp.Implementation{Name: "flights", Version: "1",
		Description: "Kubernetes recipes."}, "", true) // the operator's description replaces this
	flights.Description = "Airline flight bookings and airport departures."
	bs := []config.Backend{kube, recipes, flights}
	v := harness.StartVMCP(t, withToolSearch(config.ToolListSearchOnly), bs...)
	queries := map[string]string{
		"show my kubernetes pods":              "kube_list_items",
		"find a recipe with these ingredients": "recipes_list_items",
		"book a flight":                        "flights_list_items",
	}
	var sessions []*mcp.ClientSession
	for _, rev := range searchRevisions {
		cs := v.Connect(t, rev.version, nil)
		sessions = append(sessions, cs)
		for q, want := range queries {
			got := search(t, cs, q, 1)
			require.NotEmpty(t, got.Tools, "%s: %q", rev.name, q)
			assert.Equal(t, want, got.Tools[0].Name, "%s: %q", rev.name, q)
		}
	}
	next := slices.Clone(bs)
	next[2].Description = "Train timetables and railway tickets."
	rec := v.Server.Reload(withBackends(v.Config, next...), vmcp.ReloadAPI)
	require.Equal(t, vmcp.ReloadOK, rec.Outcome)
	for i, cs := range sessions {
		got := search(t, cs, "railway tickets", 1)
		require.NotEmpty(t, got.Tools, searchRevisions[i].name)
		assert.Equal(t, "flights_list_items", got.Tools[0].Name, searchRevisions[i].name)
	}
}
