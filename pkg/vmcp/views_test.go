package vmcp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/pagination"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// viewsKey is the state key of these tests' vmcp, so they can check that a
// cursor is vmcp's own.
const viewsKey = "views-test-state-key-0123456789abcdef"

// viewsBackend serves tools pub0000..pub0004 and sec0000..sec0002 (each
// returning its name), prompts pubp and secp, and two resources.
func viewsBackend(t *testing.T) *harness.Backend {
	return harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) {
		harness.AddTools(s, "pub", 5)
		harness.AddTools(s, "sec", 3)
		addPrompt(s, "pubp")
		addPrompt(s, "secp")
		for _, uri := range []string{"doc://a", "doc://b"} {
			s.AddResource(&mcp.Resource{URI: uri, Name: uri}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: r.Params.URI}}}, nil
			})
		}
	})
}

func addPrompt(s *mcp.Server, name string) {
	s.AddPrompt(&mcp.Prompt{Name: name}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: name}}}}, nil
	})
}

// viewsConfig pages lists by two and fixes the state key.
func viewsConfig(c *config.Config) {
	c.Pagination.PageSize = 2
	c.MRTR.StateKey = viewsKey
}

// protectedViews is a vmcp requiring tokens from idp, where principals
// with groups [admin] see everything and everyone else alpha_pub* only.
func protectedViews(t *testing.T, idp *authtest.IdP, b *harness.Backend, more ...config.Backend) *harness.VMCP {
	return harness.StartVMCP(t, func(c *config.Config) {
		viewsConfig(c)
		c.Auth = &config.Auth{Issuer: idp.Issuer(), Audience: audience, RequiredScopes: []string{"mcp:tools"},
			Leeway: config.Duration(5 * time.Second), JWKSRefreshInterval: config.Duration(time.Minute)}
		c.Authorization = &config.Authorization{Rules: []config.AuthzRule{
			{When: config.AuthzMatch{Claims: map[string][]string{"groups": {"admin"}}}, Allow: &config.AuthzItems{Backends: []string{"*"}}},
			{Allow: &config.AuthzItems{Tools: []string{"alpha_pub*"}, Prompts: []string{"alpha_pub*"}}},
		}}
	}, append([]config.Backend{b.Config()}, more...)...)
}

// principals are an admin's token (groups [admin]) and a user's.
func principals(t *testing.T, idp *authtest.IdP) (admin, user string) {
	c := idp.Claims("alice", "mcp:tools")
	c["groups"] = []string{"dev", "admin"}
	u := idp.Claims("bob", "mcp:tools")
	u["groups"] = []string{"dev"}
	return idp.Sign(t, c), idp.Sign(t, u)
}

// walkTools lists every page of tools and returns the names, each page's
// length and the cursors that led to the pages after the first.
func walkTools(t *testing.T, cs *mcp.ClientSession) (names []string, pages []int, cursors []string) {
	t.Helper()
	cursor := ""
	for range 100 {
		res, err := cs.ListTools(ctx10(t), &mcp.ListToolsParams{Cursor: cursor})
		require.NoError(t, err)
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		pages = append(pages, len(res.Tools))
		if res.NextCursor == "" {
			return names, pages, cursors
		}
		cursor = res.NextCursor
		cursors = append(cursors, cursor)
	}
	t.Fatal("the walk does not end")
	return
}

func ctx10(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// rpcErr is the JSON-RPC error err carries (failing the test if none).
func rpcErr(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	var we *jsonrpc.Error
	require.True(t, errors.As(err, &we), "want a JSON-RPC error, got %v", err)
	return we
}

// tamper flips one character in the middle of a cursor.
func tamper(s string) string {
	b := []byte(s)
	if b[len(b)/2] == 'A' {
		b[len(b)/2] = 'B'
	} else {
		b[len(b)/2] = 'A'
	}
	return string(b)
}

var allTools = []string{"alpha_pub0000", "alpha_pub0001", "alpha_pub0002", "alpha_pub0003", "alpha_pub0004",
	"alpha_sec0000", "alpha_sec0001", "alpha_sec0002"}

// Legacy lists were the go-sdk's, with unsigned cursors: a flipped
// character and another verb's cursor were accepted. Now both revisions
// page with vmcp's own HMAC cursors (one codec and key), and both refuse.
func TestTamperedOrOtherVerbCursorIsInvalidParamsOnBothRevisions(t *testing.T) {
	v := harness.StartVMCP(t, viewsConfig, viewsBackend(t).Config())
	codec := pagination.NewCodec([]byte(viewsKey))
	legacyCursor := ""
	for rev, version := range revisions {
		t.Run(rev, func(t *testing.T) {
			cs := v.Connect(t, version, nil)
			names, pages, cursors := walkTools(t, cs)
			require.Equal(t, allTools, names)
			require.Equal(t, []int{2, 2, 2, 2}, pages, "pagination.page_size")
			for _, c := range cursors {
				_, err := codec.Decode(c, "tools/list", "")
				require.NoError(t, err, "a cursor vmcp minted")
			}
			if rev == "legacy" {
				legacyCursor = cursors[0]
			}
			_, err := cs.ListTools(ctx10(t), &mcp.ListToolsParams{Cursor: tamper(cursors[0])})
			require.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcErr(t, err).Code, "tampered cursor")
			_, err = cs.ListPrompts(ctx10(t), &mcp.ListPromptsParams{Cursor: cursors[0]})
			require.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcErr(t, err).Code, "tools/list cursor on prompts/list")
			_, err = cs.ListResources(ctx10(t), &mcp.ListResourcesParams{Cursor: cursors[0]})
			require.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcErr(t, err).Code, "tools/list cursor on resources/list")
			_, err = cs.ListResourceTemplates(ctx10(t), &mcp.ListResourceTemplatesParams{Cursor: cursors[0]})
			require.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcErr(t, err).Code, "tools/list cursor on resources/templates/list")
			res, err := cs.ListResources(ctx10(t), nil)
			require.NoError(t, err)
			require.Len(t, res.Resources, 2)
		})
	}
	require.NotEmpty(t, legacyCursor)
	res, err := v.Connect(t, "", nil).ListTools(ctx10(t), &mcp.ListToolsParams{Cursor: legacyCursor})
	require.NoError(t, err, "one codec and key for both revisions")
	require.Equal(t, "alpha_pub0002", res.Tools[0].Name)
}

// vmcp's own Legacy list answer is a plain JSON-RPC response without the
// 2026-07-28-only result fields.
func TestLegacyListResultHasNoModernFields(t *testing.T) {
	v := harness.StartVMCP(t, viewsConfig, viewsBackend(t).Config())
	cs := v.Connect(t, "2025-11-25", nil)
	resp, body := raw(t, http.MethodPost, v.URL, "", cs.ID(), `{"jsonrpc":"2.0","id":"L","method":"tools/list"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	require.Contains(t, body, `"id":"L"`)
	require.Contains(t, body, `"nextCursor":`)
	for _, k := range []string{"resultType", "ttlMs", "cacheScope"} {
		require.NotContains(t, body, k)
	}
	_, body = raw(t, http.MethodPost, v.URL, "", cs.ID(), `{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"cursor":7}}`)
	require.Contains(t, body, `"code":-32602`, "a cursor that is not a string")
}

// A principal sees only what the policy allows it, paged correctly over
// its own view, and calling a hidden tool or getting a hidden prompt gets
// exactly the error of an unknown name, on both revisions.
func TestHiddenItemsAreNotListedAndUsingOneIsLikeAnUnknownName(t *testing.T) {
	idp := authtest.Start(t, audience)
	v := protectedViews(t, idp, viewsBackend(t))
	admin, user := principals(t, idp)
	for rev, version := range revisions {
		t.Run(rev, func(t *testing.T) {
			a, _, err := connect(t, v.URL, admin, version, nil)
			require.NoError(t, err)
			b, _, err := connect(t, v.URL, user, version, nil)
			require.NoError(t, err)

			names, _, _ := walkTools(t, a)
			require.Equal(t, allTools, names, "admin sees everything")
			got, err := call(t, a, "alpha_sec0001")
			require.NoError(t, err)
			require.Equal(t, "sec0001", got)

			names, pages, _ := walkTools(t, b)
			require.Equal(t, allTools[:5], names, "the user sees alpha_pub* only")
			require.Equal(t, []int{2, 2, 1}, pages, "pages of two over the user's view")

			_, hidden := call(t, b, "alpha_sec0001")
			_, unknown := call(t, b, "alpha_nope")
			require.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcErr(t, hidden).Code)
			require.Equal(t, strings.ReplaceAll(rpcErr(t, unknown).Message, "alpha_nope", "X"),
				strings.ReplaceAll(rpcErr(t, hidden).Message, "alpha_sec0001", "X"), "no existence oracle")

			ps, err := b.ListPrompts(ctx10(t), nil)
			require.NoError(t, err)
			require.Len(t, ps.Prompts, 1)
			require.Equal(t, "alpha_pubp", ps.Prompts[0].Name)
			_, hidden = b.GetPrompt(ctx10(t), &mcp.GetPromptParams{Name: "alpha_secp"})
			_, unknown = b.GetPrompt(ctx10(t), &mcp.GetPromptParams{Name: "alpha_nope"})
			require.Equal(t, strings.ReplaceAll(rpcErr(t, unknown).Message, "alpha_nope", "X"),
				strings.ReplaceAll(rpcErr(t, hidden).Message, "alpha_secp", "X"))
			_, err = a.GetPrompt(ctx10(t), &mcp.GetPromptParams{Name: "alpha_secp"})
			require.NoError(t, err)
			complete := func(cs *mcp.ClientSession, prompt string) error {
				_, err := cs.Complete(ctx10(t), &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: prompt},
					Argument: mcp.CompleteParamsArgument{Name: "x", Value: "y"}})
				return err
			}
			hidden, unknown = complete(b, "alpha_secp"), complete(b, "alpha_nope")
			require.Equal(t, strings.ReplaceAll(rpcErr(t, unknown).Message, "alpha_nope", "X"),
				strings.ReplaceAll(rpcErr(t, hidden).Message, "alpha_secp", "X"), "completion of a hidden prompt")
			require.NotContains(t, fmt.Sprint(complete(a, "alpha_secp")), "unknown", "the admin's completion reaches the backend")

			rs, err := b.ListResources(ctx10(t), nil)
			require.NoError(t, err)
			require.Empty(t, rs.Resources, "no rule gives the user resources")
			_, hidden = b.ReadResource(ctx10(t), &mcp.ReadResourceParams{URI: "doc://a"})
			_, unknown = b.ReadResource(ctx10(t), &mcp.ReadResourceParams{URI: "doc://zz"})
			require.Equal(t, rpcErr(t, unknown).Code, rpcErr(t, hidden).Code)
			_, err = a.ReadResource(ctx10(t), &mcp.ReadResourceParams{URI: "doc://a"})
			require.NoError(t, err)
			if rev == "legacy" {
				hidden = b.Subscribe(ctx10(t), &mcp.SubscribeParams{URI: "doc://a"})
				unknown = b.Subscribe(ctx10(t), &mcp.SubscribeParams{URI: "doc://zz"})
				require.Equal(t, strings.ReplaceAll(rpcErr(t, unknown).Message, "doc://zz", "X"),
					strings.ReplaceAll(rpcErr(t, hidden).Message, "doc://a", "X"), "subscribing to a hidden resource")
			}
		})
	}
}

// A cursor is minted for one principal's view: another principal
// presenting it gets -32602, on both revisions.
func TestAnotherPrincipalsCursorIsInvalidParams(t *testing.T) {
	idp := authtest.Start(t, audience)
	v := protectedViews(t, idp, viewsBackend(t))
	admin, user := principals(t, idp)
	for rev, version := range revisions {
		t.Run(rev, func(t *testing.T) {
			a, _, err := connect(t, v.URL, admin, version, nil)
			require.NoError(t, err)
			b, _, err := connect(t, v.URL, user, version, nil)
			require.NoError(t, err)
			_, _, aCursors := walkTools(t, a)
			_, _, bCursors := walkTools(t, b)
			_, err = b.ListTools(ctx10(t), &mcp.ListToolsParams{Cursor: aCursors[0]})
			we := rpcErr(t, err)
			require.Equal(t, int64(jsonrpc.CodeInvalidParams), we.Code)
			require.Contains(t, we.Message, "another principal")
			_, err = a.ListTools(ctx10(t), &mcp.ListToolsParams{Cursor: bCursors[0]})
			require.Equal(t, int64(jsonrpc.CodeInvalidParams), rpcErr(t, err).Code)
		})
	}
}

// A 2025-03-26 batch is served by the go-sdk handler, not the relay: its
// list requests still get vmcp's cursors and checks, never the SDK's.
func TestBatchedLegacyListGetsVmcpsCursors(t *testing.T) {
	v := harness.StartVMCP(t, viewsConfig, viewsBackend(t).Config())
	cs := v.Connect(t, "2025-03-26", nil)
	first, err := cs.ListTools(ctx10(t), nil)
	require.NoError(t, err)
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},` +
		`{"jsonrpc":"2.0","id":2,"method":"prompts/list","params":{"cursor":"` + first.NextCursor + `"}}]`
	req, err := http.NewRequestWithContext(ctx10(t), http.MethodPost, v.URL, strings.NewReader(batch))
	require.NoError(t, err)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	req.Header.Set("Mcp-Protocol-Version", "2025-03-26")
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	_, after, ok := strings.Cut(string(body), `"nextCursor":"`)
	require.True(t, ok, "a first page with a next cursor: %s", body)
	cursor, _, _ := strings.Cut(after, `"`)
	_, err = pagination.NewCodec([]byte(viewsKey)).Decode(cursor, "tools/list", "")
	require.NoError(t, err, "vmcp's own cursor")
	require.Contains(t, string(body), `"code":-32602`, "a tools/list cursor on prompts/list")
}
