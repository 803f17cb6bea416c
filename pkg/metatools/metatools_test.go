package metatools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// bigCatalogue is n tools over n/20 backends with long names and
// descriptions, tool search listing its two tools alone.
func bigCatalogue(t *testing.T, n int) *aggregator.Catalogue {
	c, _, err := aggregator.Build(aggregator.Policy{Own: Own(true, false)}, inventories(n))
	require.NoError(t, err)
	return c
}

// inventories are n tools over n/20 backends.
func inventories(n int) []aggregator.Inventory {
	var inv []aggregator.Inventory
	for b := range n / 20 {
		in := aggregator.Inventory{Backend: fmt.Sprintf("backend-with-a-rather-long-name-%03d", b)}
		for i := range 20 {
			in.Tools = append(in.Tools, &mcp.Tool{Name: fmt.Sprintf("tool_%d_%s", i, strings.Repeat("x", i*3)),
				Description: strings.Repeat("does things ", 40) + fmt.Sprintf("number %d", i), InputSchema: map[string]any{"type": "object"}})
		}
		inv = append(inv, in)
	}
	return inv
}

// TestDefinitionsStayUnder6000BytesAtAnySize: the two definitions' JSON is
// bounded (issue 31: < 6,000 bytes) and names backends, at 10 and 10,000
// tools.
func TestDefinitionsStayUnder6000BytesAtAnySize(t *testing.T) {
	t.Parallel()
	for _, n := range []int{20, 10000} {
		c := bigCatalogue(t, n)
		b, err := json.Marshal(c.Tools)
		require.NoError(t, err)
		assert.Less(t, len(b), 6000, "%d tools: %d bytes", n, len(b))
		assert.Contains(t, c.Tools[1].Description, "backend-with-a-rather-long-name-000 (20 tools: tool_0_, tool_1_xxx,")
		t.Logf("%d tools: definitions %d bytes", n, len(b))
	}
	assert.Regexp(t, `; and 4\d\d more\.$`, bigCatalogue(t, 10000).Tools[1].Description)
}

// TestDefinitionsNameNoBackendUnderAPolicy: with an authorization policy
// the one description every principal sees names no backend.
func TestDefinitionsNameNoBackendUnderAPolicy(t *testing.T) {
	t.Parallel()
	c, _, err := aggregator.Build(aggregator.Policy{Own: Own(true, true)}, []aggregator.Inventory{{Backend: "secret-hr", Tools: []*mcp.Tool{{Name: "fire"}}}})
	require.NoError(t, err)
	assert.Equal(t, searchDescription, c.Tools[1].Description)
	assert.Equal(t, SearchName, c.Tools[1].Name)
}

// TestRewriteUnwrapsCallTool: the inner tool's call keeps every other
// member and the Mcp-Name header follows; anything else is left as is.
func TestRewriteUnwrapsCallTool(t *testing.T) {
	t.Parallel()
	body := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"call_tool","_meta":{"progressToken":"p"},"arguments":{"name":"a_read","arguments":{"path":"/x"}}}}`
	r := httptest.NewRequest("POST", "/mcp", nil)
	r.Body = wire.NewBufferedBody([]byte(body))
	r.Header.Set("Mcp-Name", "call_tool")
	Rewrite(r)
	var got map[string]any
	require.NoError(t, json.Unmarshal(r.Body.(*wire.BufferedBody).Bytes(), &got))
	assert.Equal(t, map[string]any{"jsonrpc": "2.0", "id": 7.0, "method": "tools/call", "params": map[string]any{
		"name": "a_read", "_meta": map[string]any{"progressToken": "p"}, "arguments": map[string]any{"path": "/x"}}}, got)
	assert.Equal(t, "a_read", r.Header.Get("Mcp-Name"))
	assert.Equal(t, "=?base64?w6k=?=", headerValue("é"))

	for _, b := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a_read","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"call_tool"}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":3}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"call_tool","arguments":{"name":"x","arguments":[1]}}}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"name":"call_tool"}}`,
	} {
		_, _, ok := rewrite([]byte(b))
		assert.False(t, ok, b)
	}
}

// TestCallRefusesBadArguments: -32602 naming the problem.
func TestCallRefusesBadArguments(t *testing.T) {
	t.Parallel()
	agg := aggregator.New(aggregator.Policy{Own: Own(true, false)}, nil)
	tools := New(agg, nil, nil, nil)
	for args, want := range map[string]string{
		`{}`:                        "query is required",
		`{"query":"x","limit":0}`:   "limit must be 1 to 50",
		`{"query":"x","limit":51}`:  "limit must be 1 to 50",
		`{"query":3}`:               "arguments must be an object",
		`{"query":"x","limit":2.5}`: "arguments must be an object",
	} {
		_, err := tools.Call(context.Background(), &upstream.Request{Method: "tools/call", Name: SearchName}, json.RawMessage(args))
		var je *jsonrpc.Error
		require.True(t, errors.As(err, &je), args)
		assert.Equal(t, int64(jsonrpc.CodeInvalidParams), je.Code)
		assert.Contains(t, je.Message, want, args)
	}
	_, err := tools.Call(context.Background(), &upstream.Request{Method: "tools/call", Name: CallName}, json.RawMessage(`{}`))
	assert.ErrorContains(t, err, "call_tool: arguments must be")
}

// TestSearchFollowsTheCatalogue: after Update the next search sees the new
// tool, with its schema and backend; an empty query finds nothing.
func TestSearchFollowsTheCatalogue(t *testing.T) {
	t.Parallel()
	agg := aggregator.New(aggregator.Policy{Own: Own(true, false)}, nil)
	tools := New(agg, nil, nil, nil)
	req := &upstream.Request{Method: "tools/call", Name: SearchName}
	assert.Empty(t, tools.Search(context.Background(), req, "forecast", 5))
	agg.Update(aggregator.Inventory{Backend: "wx", Tools: []*mcp.Tool{{Name: "get_forecast", Description: "Weather forecast.",
		InputSchema: map[string]any{"type": "object"}}}})
	got := tools.Search(context.Background(), req, "weather forecast", 5)
	require.Len(t, got, 1)
	assert.Equal(t, Found{Name: "wx_get_forecast", Description: "Weather forecast.", InputSchema: map[string]any{"type": "object"}, Backend: "wx"}, got[0])
	res, err := tools.Call(context.Background(), req, json.RawMessage(`{"query":"weather"}`))
	require.NoError(t, err)
	assert.JSONEq(t, `{"tools":[{"name":"wx_get_forecast","description":"Weather forecast.","inputSchema":{"type":"object"},"backend":"wx"}]}`,
		res.Content[0].(*mcp.TextContent).Text)
}

// TestBackendNameCountedAsEachToolsName: a tool was indexed by its
// advertised name, "{backend}_{name}", so a backend's name weighed as the
// name of each of its tools (the backend's own field aside): "weather"
// found the weather backend's alerts before another backend's get_weather.
func TestBackendNameCountedAsEachToolsName(t *testing.T) {
	t.Parallel()
	agg := aggregator.New(aggregator.Policy{Own: Own(true, false)}, nil)
	obj := map[string]any{"type": "object"}
	agg.Update(aggregator.Inventory{Backend: "weather", Tools: []*mcp.Tool{{Name: "alerts", Description: "Active alerts for a region.", InputSchema: obj}}})
	agg.Update(aggregator.Inventory{Backend: "city", Tools: []*mcp.Tool{{Name: "get_weather", Description: "Current conditions in a city.", InputSchema: obj}}})
	got := New(agg, nil, nil, nil).Search(context.Background(), &upstream.Request{Method: "tools/call", Name: SearchName}, "weather", 2)
	require.NotEmpty(t, got)
	assert.Equal(t, "city_get_weather", got[0].Name)
}

// BenchmarkSearchToolsCall10k: vmcp's own work in one search_tools call at
// 10,000 tools (ranking, filtering, the result's JSON), without HTTP.
func BenchmarkSearchToolsCall10k(b *testing.B) {
	agg := aggregator.New(aggregator.Policy{Own: Own(true, false)}, nil)
	agg.Replace(aggregator.Policy{Own: Own(true, false)}, inventories(10000), nil) // one rebuild
	tools := New(agg, nil, nil, nil)
	req := &upstream.Request{Method: "tools/call", Name: SearchName}
	args := json.RawMessage(`{"query":"does things with tool number 7 quickly","limit":10}`)
	for b.Loop() {
		if _, err := tools.Call(context.Background(), req, args); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRebuild10k: the index rebuild after a catalogue change at
// 10,000 tools (one backend of 20 tools added, then removed), as Run does
// it off the request path (issue 31: ≤ 100 ms).
func BenchmarkRebuild10k(b *testing.B) {
	inv := inventories(10020)
	agg := aggregator.New(aggregator.Policy{Own: Own(true, false)}, nil)
	agg.Replace(aggregator.Policy{Own: Own(true, false)}, inv[:500], nil)
	small := agg.Current()
	agg.Replace(aggregator.Policy{Own: Own(true, false)}, inv, nil)
	big := agg.Current()
	tools := New(agg, nil, nil, nil)
	tools.build(small)
	for i := 0; b.Loop(); i++ {
		if i%2 == 0 {
			tools.build(big)
		} else {
			tools.build(small)
		}
	}
}
