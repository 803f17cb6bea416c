package integration

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/test/integration/harness"
	"github.com/vmcp/vmcp/test/integration/harness/servertools"
)

// batchVersion is the last revision with JSON-RPC batches: a batch POST
// says it in MCP-Protocol-Version (the go-sdk refuses one at 2025-06-18+).
const batchVersion = "2025-03-26"

// startBatch POSTs a 2025-03-26 JSON-RPC batch on c's session without
// waiting (the relay takes single messages only: the go-sdk handler
// serves a batch).
func (c *raClient) startBatch(body string) *raCall {
	ctx, cancel := context.WithCancel(context.Background())
	rc := &raCall{status: make(chan int, 1), msgs: make(chan raMsg, 256), cut: cancel}
	go func() {
		defer close(rc.msgs)
		req := c.request(ctx, c.sid, body)
		req.Header.Set("Mcp-Protocol-Version", batchVersion)
		resp, err := c.hc.Do(req)
		if err != nil {
			rc.status <- -1
			return
		}
		defer resp.Body.Close()
		rc.status <- resp.StatusCode
		for m := range raMessages(resp) {
			rc.msgs <- m
		}
	}()
	return rc
}

// batchBackends are a stdio and a stateful streamable HTTP backend, both
// serving servertools ("ask", "report") plus a prompt and a resource.
func batchBackends(t *testing.T) map[string]config.Backend {
	h := harness.StartBackend(t, "h", harness.Stateful, func(s *mcp.Server) {
		servertools.Add(s)
		s.AddPrompt(&mcp.Prompt{Name: "greet"}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hello"}}}}, nil
		})
		s.AddResource(&mcp.Resource{URI: "mem://note", Name: "note"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: r.Params.URI, Text: "note"}}}, nil
		})
	})
	return map[string]config.Backend{"stdio": harness.StdioBackend(t, "s"), "http": h.Config()}
}

// TestBatchedLegacyCallOnStdioTimedOutWaitingForItsAsk pins the calls the
// relay does not take (a 2025-03-26 JSON-RPC batch, served by the go-sdk
// handler), which went out through the go-sdk client instead of
// upstream.Core.Do: on a stdio backend the elicitation/create a tool asked
// never reached the batch's own stream (the client holds no GET stream),
// and the call failed "timed out" after 30 s. Through Do, on stdio and HTTP
// alike, the ask reaches the batch's stream and the client's answer goes
// back; a call's progress precedes its response on that stream; every
// member of a batch (call, get, read) is answered; each backend request is
// counted once.
func TestBatchedLegacyCallOnStdioTimedOutWaitingForItsAsk(t *testing.T) {
	t.Parallel()
	for kind, b := range batchBackends(t) {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			v := harness.StartVMCP(t, nil, b)
			p := b.Name + "_"
			awaitTools(t, v, p+"ask", p+"report")
			c := raConnect(t, v, `{"elicitation":{}}`) // no GET stream
			// The ask alone in its batch: on stdio a backend's ask goes to
			// the oldest request in flight on the connection (nothing tells
			// which request it belongs to).
			results, _ := c.batch(t, `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"`+p+`ask","arguments":{}}}]`, 1)
			assert.Equal(t, "asked:accept:ada", results["1"].text())
			results, progress := c.batch(t, `[{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"`+p+`report","arguments":{"marker":"m","n":3},"_meta":{"progressToken":"tok"}}},`+
				`{"jsonrpc":"2.0","id":3,"method":"prompts/get","params":{"name":"`+p+`greet","arguments":{"name":"x"}}},`+
				`{"jsonrpc":"2.0","id":4,"method":"resources/read","params":{"uri":"mem://note"}}]`, 3)
			assert.Equal(t, "reported:m", results["2"].text())
			assert.Equal(t, 3, progress, "progress on the batch's stream, before its call's response")
			assert.Contains(t, results["3"].raw, "hello", "prompts/get")
			assert.True(t, strings.Contains(results["4"].raw, `"text":"note"`), "resources/read: %s", results["4"].raw)
			m := v.Server.Metrics().BackendRequests
			assert.Equal(t, 2.0, testutil.ToFloat64(m.WithLabelValues(b.Name, "tools/call", upstream.RevisionLegacy, "ok")))
			assert.Equal(t, 1.0, testutil.ToFloat64(m.WithLabelValues(b.Name, "prompts/get", upstream.RevisionLegacy, "ok")))
			assert.Equal(t, 1.0, testutil.ToFloat64(m.WithLabelValues(b.Name, "resources/read", upstream.RevisionLegacy, "ok")))
		})
	}
}

// batch sends a batch of n requests on c's session and returns their
// responses by id, answering elicitation/create with the name "ada", and
// the number of progress notifications with token "tok" that came before
// the response to id 2.
func (c *raClient) batch(t *testing.T, body string, n int) (map[string]raMsg, int) {
	t.Helper()
	rc := c.startBatch(body)
	require.Equal(t, http.StatusOK, <-rc.status)
	results, progress := map[string]raMsg{}, 0
	for len(results) < n {
		m := rc.next(t, "the batch's messages")
		switch m.Method {
		case "elicitation/create":
			status, _ := c.post(t, `{"jsonrpc":"2.0","id":`+string(m.ID)+`,"result":{"action":"accept","content":{"name":"ada"}}}`)
			require.Equal(t, http.StatusAccepted, status, "the answer")
		case "notifications/progress":
			var pp struct {
				Token any `json:"progressToken"`
			}
			require.NoError(t, json.Unmarshal(m.Params, &pp))
			if _, done := results["2"]; pp.Token == "tok" && !done {
				progress++
			}
		case "":
			results[string(m.ID)] = m
		}
	}
	return results, progress
}
