package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// nullBackend starts a backend whose tool, prompt and resource "nul" are
// listed as usual but whose tools/call, prompts/get and resources/read of
// them are answered {"result": null}.
func nullBackend(t *testing.T, name string, mode harness.Mode) *harness.Backend {
	b := harness.StartBackend(t, name, mode, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "nul", InputSchema: flowSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return flowResult("not null"), nil
		})
		s.AddPrompt(&mcp.Prompt{Name: "nul"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "not null"}}}}, nil
		})
		s.AddResource(&mcp.Resource{URI: "nul://" + name, Name: "nul"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "nul://" + name, Text: "not null"}}}, nil
		})
	})
	answerRaw(b, `"result":null`, func(_, tool, uri string) bool { return tool == "nul" || uri == "nul://"+name })
	return b
}

// answerRaw makes b answer every request whose method, params.name and
// params.uri match with the response members given (after jsonrpc and
// id, e.g. `"result":null`); the rest reach b as before.
func answerRaw(b *harness.Backend, members string, match func(method, name, uri string) bool) {
	h := b.HTTP.Config.Handler
	b.HTTP.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Params struct {
				Name string `json:"name"`
				URI  string `json:"uri"`
			} `json:"params"`
		}
		if json.Unmarshal(body, &m) == nil && len(m.ID) > 0 && match(m.Method, m.Params.Name, m.Params.URI) {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write([]byte(`{"jsonrpc":"2.0","id":` + string(m.ID) + `,` + members + `}`))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	})
}

// TestBackendNullResultBecameEmptySuccess pins a backend answering
// tools/call, prompts/get or resources/read with "result": null: on the
// go-sdk client paths (a Legacy client's own session to a Modern backend,
// the Modern control connection and parked sessions) the SDK decoded null
// into a zero result, and the client got an empty success. Every path now
// answers -32603 naming the backend and the method.
func TestBackendNullResultBecameEmptySuccess(t *testing.T) {
	modern, legacy := nullBackend(t, "mb", harness.Stateless), nullBackend(t, "lb", harness.Stateful)
	v := raVMCP(t, nil, []string{"mb_nul", "lb_nul"}, modern, legacy)
	for _, client := range []string{"legacy", "modern"} {
		var fc *flowClient
		if client == "legacy" {
			fc = connectFlow(t, v, "n", nil)
		} else {
			fc = connectModern(t, v, "n", nil)
		}
		for _, b := range []string{"mb", "lb"} {
			res, err := fc.call(flowCtx(t), b+"_nul", nil, nil)
			requireNullResultError(t, err, b, "tools/call", client, res)
			pr, err := fc.cs.GetPrompt(flowCtx(t), &mcp.GetPromptParams{Name: b + "_nul"})
			requireNullResultError(t, err, b, "prompts/get", client, pr)
			rr, err := fc.cs.ReadResource(flowCtx(t), &mcp.ReadResourceParams{URI: "nul://" + b})
			requireNullResultError(t, err, b, "resources/read", client, rr)
		}
	}
}

func requireNullResultError(t *testing.T, err error, backend, method, client string, res any) {
	t.Helper()
	what := client + " client, " + method + " on " + backend
	var we *jsonrpc.Error
	if !assert.ErrorAs(t, err, &we, "%s: a null result must not become an empty success (got %+v)", what, res) {
		return
	}
	assert.EqualValues(t, jsonrpc.CodeInternalError, we.Code, what)
	assert.Contains(t, we.Message, `"`+backend+`"`, "%s: the message names the backend", what)
	assert.Contains(t, we.Message, method, "%s: the message names the method", what)
	assert.Contains(t, we.Message, "null", what)
}
