package modern_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
)

// verbs maps each list verb to the result member holding its items and the
// item field that keys it.
var verbs = []struct{ verb, items, key string }{
	{"tools/list", "tools", "name"},
	{"resources/list", "resources", "uri"},
	{"resources/templates/list", "resourceTemplates", "uriTemplate"},
	{"prompts/list", "prompts", "name"},
}

// many runs vmcp (page size 7) over one Modern backend with 20 tools and
// 10 each of prompts, resources and templates.
func many(t *testing.T) string {
	t.Helper()
	be := startBackend(t, "m", true, func(s *mcp.Server) {
		for i := range 20 {
			echo(s, "m", fmt.Sprintf("t%02d", i))
		}
		read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "x"}}}, nil
		}
		get := func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		}
		for i := range 10 {
			s.AddPrompt(&mcp.Prompt{Name: fmt.Sprintf("p%02d", i)}, get)
			s.AddResource(&mcp.Resource{URI: fmt.Sprintf("m://r%02d", i), Name: "r"}, read)
			s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: fmt.Sprintf("m://t%02d/{x}", i), Name: "t"}, read)
		}
	})
	url, _ := startVMCP(t, func(c *config.Config) { c.Pagination.PageSize = 7 }, be)
	return url
}

// listPage fetches one page; cursor is raw JSON ("" sends no cursor).
func listPage(t *testing.T, url, verb, cursor string) (int, reply) {
	t.Helper()
	params := `{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if cursor != "" {
		params += `,"cursor":` + cursor
	}
	resp, b := post(t, url, modernHeaders(verb, ""), `{"jsonrpc":"2.0","id":1,"method":"`+verb+`","params":`+params+`}}`)
	return resp.StatusCode, decodeReply(t, b)
}

// Page size 7 walks every item of every verb once, in order; the last page
// has no nextCursor, and "" is the first page.
func TestKeysetWalk(t *testing.T) {
	url := many(t)
	for _, v := range verbs {
		t.Run(v.verb, func(t *testing.T) {
			var keys []string
			var sizes []int
			cursor := `""`
			for range 10 {
				st, r := listPage(t, url, v.verb, cursor)
				res := result(t, st, r)
				assert.Equal(t, "complete", res["resultType"])
				items := res[v.items].([]any)
				sizes = append(sizes, len(items))
				for _, it := range items {
					keys = append(keys, it.(map[string]any)[v.key].(string))
				}
				next, ok := res["nextCursor"].(string)
				if !ok {
					assert.NotContains(t, string(r.Result), "nextCursor", "the last page omits nextCursor")
					break
				}
				require.NotEmpty(t, next)
				cursor = fmt.Sprintf("%q", next)
			}
			total := map[string]int{"tools": 20}[v.items]
			if total == 0 {
				total = 10
			}
			require.Len(t, keys, total, "pages %v", sizes)
			require.IsIncreasing(t, keys, "sorted, no repeats")
			assert.Equal(t, 7, sizes[0])
		})
	}
}

// A cursor is bound to its verb, to vmcp's key and to its exact bytes.
func TestBadCursors(t *testing.T) {
	url := many(t)
	cursors := map[string]string{}
	for _, v := range verbs {
		st, r := listPage(t, url, v.verb, "")
		cursors[v.verb] = result(t, st, r)["nextCursor"].(string)
		require.NotEmpty(t, cursors[v.verb])
	}
	for _, from := range verbs {
		for _, to := range verbs {
			if from.verb == to.verb {
				continue
			}
			st, r := listPage(t, url, to.verb, fmt.Sprintf("%q", cursors[from.verb]))
			jerr := requireError(t, st, r, http.StatusBadRequest, jsonrpc.CodeInvalidParams)
			assert.Contains(t, jerr.Message, from.verb, "%s cursor on %s", from.verb, to.verb)
		}
	}
	good := cursors["tools/list"]
	flipped := []byte(good)
	flipped[len(flipped)/2] ^= 1
	bad := map[string]string{
		"corrupted":  fmt.Sprintf("%q", flipped),
		"truncated":  fmt.Sprintf("%q", good[:len(good)-3]),
		"10KB":       fmt.Sprintf("%q", strings.Repeat("A", 10240)),
		"not base64": `"!!!"`,
		"number":     `42`,
		"object":     `{"cursor":"x"}`,
		"bool":       `true`,
	}
	for name, c := range bad {
		st, r := listPage(t, url, "tools/list", c)
		requireError(t, st, r, http.StatusBadRequest, jsonrpc.CodeInvalidParams)
		assert.Equal(t, "1", string(r.ID), name)
	}
	st, r := listPage(t, url, "tools/list", "null")
	var res struct{ Tools []json.RawMessage }
	require.NoError(t, json.Unmarshal(r.Result, &res))
	assert.Equal(t, http.StatusOK, st)
	assert.Len(t, res.Tools, 7, "a null cursor is the first page")
}
