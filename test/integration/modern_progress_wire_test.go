package integration

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// addParkReport (Legacy backends): progress 1 and a warning log, one
// elicitation, then progress 2 and 3 and an error log, then the result.
func addParkReport(s *mcp.Server) {
	s.AddTool(&mcp.Tool{Name: "parkreport", InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := flowArgsOf(req)
		tok := req.Params.GetProgressToken()
		step := func(i int, level mcp.LoggingLevel) error {
			if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: 3, Message: a.Marker}); err != nil {
				return err
			}
			if level == "" {
				return nil
			}
			return req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: level, Data: map[string]any{"marker": a.Marker, "level": string(level)}})
		}
		if err := step(1, "warning"); err != nil {
			return nil, err
		}
		if _, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "go on?", RequestedSchema: nameSchema}); err != nil {
			return nil, err
		}
		if err := step(2, ""); err != nil {
			return nil, err
		}
		if err := step(3, "error"); err != nil {
			return nil, err
		}
		return flowResult("parked:%s", a.Marker), nil
	})
}

// TestModernParkedCallProgressLost pins progress and logs of a Legacy
// backend's call parked for MRTR: each goes on the stream of the client
// request waiting on the call at that moment (the first request, then the
// retry), before that request's reply, with the client's token.
func TestModernParkedCallProgressLost(t *testing.T) {
	be := harness.StartBackend(t, "lb", harness.Stateful, addParkReport)
	v := harness.StartVMCP(t, nil, be.Config())
	awaitTools(t, v, "lb_parkreport")
	c := connectModern(t, v, "park", &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"v": "yes"}}, nil
		},
	})
	res, err := c.report(flowCtx(t), "lb_parkreport", "pk", 3, "ptok", "warning")
	require.Equal(t, "parked:pk", flowText(res, err))
	total, onPost := c.wireProgress(`"ptok"`)
	assert.Equal(t, 3, total, "progress read before the last reply")
	assert.Equal(t, 3, onPost, "progress on the requests' own streams")
	assert.Equal(t, []string{"warning", "error"}, c.wireLogs("pk"))
	require.True(t, c.progress.await(func(ps []*mcp.ProgressNotificationParams) bool { return len(ps) >= 3 }))
	for i, p := range c.progress.all() {
		assert.Equal(t, float64(i+1), p.Progress, "order")
		assert.Equal(t, "ptok", p.ProgressToken)
	}
}

// sseMessages reads a text/event-stream body into its JSON-RPC messages.
func sseMessages(t *testing.T, resp *http.Response) []map[string]any {
	t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
			var m map[string]any
			dec := json.NewDecoder(strings.NewReader(d))
			dec.UseNumber() // a token's digits as sent
			require.NoError(t, dec.Decode(&m))
			out = append(out, m)
		}
	}
	return out
}

// TestModernProgressReplyNotStreamed pins the wire shape: a request with a
// progressToken gets text/event-stream (Cache-Control: no-cache,
// X-Accel-Buffering: no) with the progress first and the response last;
// one with neither progressToken nor logLevel keeps a plain JSON body,
// on the shared control connection (Legacy) and on direct POSTs (Modern).
func TestModernProgressReplyNotStreamed(t *testing.T) {
	legacy := harness.StartBackend(t, "legacyhttp", harness.Stateful, func(s *mcp.Server) { addReport(s, nil) })
	modern := harness.StartBackend(t, "modernhttp", harness.Stateless, func(s *mcp.Server) { addReport(s, nil) })
	v := harness.StartVMCP(t, nil, legacy.Config(), modern.Config())
	awaitTools(t, v, "legacyhttp_report", "modernhttp_report")
	for _, tool := range []string{"legacyhttp_report", "modernhttp_report"} {
		resp := modernPost(t, ctx(t), v, `"r1"`, "tools/call", tool, map[string]any{"name": tool,
			"arguments": map[string]any{"marker": "w", "n": 3}, "_meta": map[string]any{"progressToken": 12345678901234567}})
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"), tool)
		assert.Equal(t, "no-cache", resp.Header.Get("Cache-Control"), tool)
		assert.Equal(t, "no", resp.Header.Get("X-Accel-Buffering"), tool)
		msgs := sseMessages(t, resp)
		resp.Body.Close()
		require.Len(t, msgs, 4, tool)
		for i, m := range msgs[:3] {
			assert.Equal(t, "notifications/progress", m["method"], tool)
			p := m["params"].(map[string]any)
			assert.Equal(t, json.Number(strconv.Itoa(i+1)), p["progress"], tool)
			assert.Equal(t, json.Number("12345678901234567"), p["progressToken"], "%s: token not exactly as sent", tool)
		}
		assert.Equal(t, "r1", msgs[3]["id"], tool)
		assert.NotNil(t, msgs[3]["result"], tool)

		st, msg := modernRPC(t, v, `2`, "tools/call", tool, map[string]any{"name": tool, "arguments": map[string]any{"marker": "j"}})
		assert.Equal(t, http.StatusOK, st, tool)
		assert.NotNil(t, msg["result"], "%s: no progressToken nor logLevel is a JSON reply", tool)
	}
}

// TestModernPromptProgressLostOnSharedConnection pins progress and logs of
// a Modern HTTP backend reached through the go-sdk client on the shared
// control connection (prompts/get has no direct path): they must reach
// the request's stream before the result, logs at the client's level only.
func TestModernPromptProgressLostOnSharedConnection(t *testing.T) {
	be := harness.StartBackend(t, "mb", harness.Stateless, func(s *mcp.Server) {
		s.AddPrompt(&mcp.Prompt{Name: "p"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			for i := 1; i <= 3; i++ {
				if err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: float64(i), Message: "pp"}); err != nil {
					return nil, err
				}
			}
			for _, lv := range reportLevels {
				if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: lv, Data: map[string]any{"marker": "pp", "level": string(lv)}}); err != nil {
					return nil, err
				}
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
		})
	})
	v := harness.StartVMCP(t, nil, be.Config())
	c := connectModern(t, v, "prompt", nil)
	require.Eventually(t, func() bool {
		_, err := c.cs.GetPrompt(ctx(t), &mcp.GetPromptParams{Name: "mb_p"})
		return err == nil
	}, stateWait, 10*time.Millisecond, "prompt never listed")
	_, err := c.cs.GetPrompt(ctx(t), &mcp.GetPromptParams{Name: "mb_p", Meta: mcp.Meta{"progressToken": "gp", mcp.MetaKeyLogLevel: "error"}})
	require.NoError(t, err)
	total, onPost := c.wireProgress(`"gp"`)
	assert.Equal(t, 3, total, "progress read before the result")
	assert.Equal(t, 3, onPost)
	assert.Equal(t, []string{"error"}, c.wireLogs("pp"), "logs at or above the client's level")
}
