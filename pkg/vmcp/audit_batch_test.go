package vmcp_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/auth/authtest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// A 2025-03-26 client's JSON-RPC batch carrying two tool calls and a
// list is audited as what it is: a record per call, naming the tool,
// with its (redacted) arguments. Regression: the batch got one record
// per HTTP request, whose method, tool and decision were those of the
// member the go-sdk reported first (often the tools/list), and no
// arguments at all (the body is an array): a principal could call any
// tool unseen in the audit log by putting a list before it in a batch.
func TestAuditBatchRecordedOneMemberAndNoArguments(t *testing.T) {
	idp := authtest.Start(t, audience)
	sink, path := newAuditSink(), filepath.Join(t.TempDir(), "audit.log")
	v := auditedVMCP(t, idp, sink, path)
	alice := idp.Token(t, "alice", "mcp:tools")
	lc := auditClient(t, v, alice, "audit-batch", "1", "2025-03-26")

	call := func(id int, tool, pw string) string {
		return fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":%q,"arguments":{"text":"t","password":%q}}}`, id, tool, pw)
	}
	// alpha_echo allows 2 calls an hour (the third is rate-limited);
	// alpha_count is denied by authorization rule 1.
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/list"},` + call(2, "alpha_echo", "pw-1") + "," + call(3, "alpha_echo", "pw-2") +
		"," + call(4, "alpha_echo", "pw-3") + "," + call(5, "alpha_count", "pw-4") + "]"
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.URL, strings.NewReader(batch))
	require.NoError(t, err)
	for k, val := range map[string]string{"Authorization": "Bearer " + alice, "Mcp-Session-Id": lc.ID(),
		"Mcp-Protocol-Version": "2025-03-26", "Content-Type": "application/json", "Accept": "application/json, text/event-stream"} {
		req.Header.Set(k, val)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	_, err = io.Copy(io.Discard, resp.Body) // the whole batch's answer, as a client reads it
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	echoes := sink.await(t, "a record per call of the batch", 3, func(m map[string]any) bool {
		return m["method"] == "tools/call" && m["tool"] == "alpha_echo" && m["session"] == lc.ID()
	})
	allowed := map[string]any{"allowed": true, "by": "authorization", "rule": 0.0}
	limited := map[string]any{"allowed": false, "by": "rate_limit", "rule": 0.0}
	var decisions []any
	for _, rec := range echoes {
		args, _ := rec["arguments"].(map[string]any)
		require.NotNil(t, args, "the call's arguments: %v", rec)
		assert.Equal(t, "[REDACTED]", args["password"])
		assert.Equal(t, "alpha", rec["backend"])
		decisions = append(decisions, rec["decision"])
		if rec["decision"].(map[string]any)["allowed"] == true {
			assert.Equal(t, "ok", rec["outcome"], "an allowed call's own outcome")
		} else {
			assert.NotEqual(t, "ok", rec["outcome"], "a refused call's own outcome")
		}
	}
	assert.ElementsMatch(t, []any{allowed, allowed, limited}, decisions, "each call's own decision")
	denied := sink.await(t, "the denied call's record", 1, func(m map[string]any) bool {
		return m["method"] == "tools/call" && m["tool"] == "alpha_count" && m["session"] == lc.ID()
	})[0]
	assert.Equal(t, map[string]any{"allowed": false, "by": "authorization", "rule": 1.0}, denied["decision"])
	sink.await(t, "the list's record", 1, func(m map[string]any) bool {
		return m["method"] == "tools/list" && m["session"] == lc.ID()
	})

}

// A batch whose client leaves while its call still runs gets the call's
// own record once the call ends. Regression: the call's facts reached the
// request's Exchange after it ended and were lost: its record had no
// backend, decision or outcome of its own.
func TestAuditBatchOfALeavingClientLostItsCalls(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}, 1), make(chan struct{})
	var releaseOnce sync.Once
	free := func() { releaseOnce.Do(func() { close(release) }) }
	defer free() // before the backend's cleanup waits for its handler, also when the test fails
	hb := harness.StartBackend(t, "hb", harness.Stateful, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "hold", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				entered <- struct{}{}
				<-release
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "held"}}}, nil
			})
	})
	sink, path := newAuditSink(), filepath.Join(t.TempDir(), "audit.log")
	v := harness.StartVMCPWithOptions(t, vmcp.Options{AuditOpen: sink.open}, func(c *config.Config) {
		c.Audit = &config.Audit{Path: path, Arguments: true, Redact: config.DefaultRedact()}
	}, hb.Config())
	lc := v.Connect(t, "2025-03-26", nil)
	// One request only: the Exchange's method label is then tools/call
	// (a batch's label is whichever member the go-sdk observed first).
	batch := `[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"hb_hold","arguments":{"k":"v"}}}]`
	ctx, leave := context.WithCancel(context.Background())
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, v.URL, strings.NewReader(batch))
	require.NoError(t, err)
	for k, val := range map[string]string{"Mcp-Session-Id": lc.ID(), "Mcp-Protocol-Version": "2025-03-26",
		"Content-Type": "application/json", "Accept": "application/json, text/event-stream"} {
		req.Header.Set(k, val)
	}
	go func() {
		if resp, err := http.DefaultClient.Do(req); err == nil {
			resp.Body.Close()
		}
	}()
	<-entered
	leave()
	ended := func() bool {
		return testutil.ToFloat64(v.Server.Metrics().Requests.WithLabelValues("tools/call", "legacy", "cancelled")) > 0
	}
	require.Eventually(t, ended, 20*time.Second, 5*time.Millisecond, "the batch's HTTP request ended")
	free()
	rec := sink.await(t, "the call's own record", 1, func(m map[string]any) bool {
		return m["method"] == "tools/call" && m["tool"] == "hb_hold"
	})[0]
	assert.Equal(t, "hb", rec["backend"], "the call's own backend: %v", rec)
	assert.Equal(t, map[string]any{"k": "v"}, rec["arguments"])
}
