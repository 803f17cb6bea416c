package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	legacydispatch "github.com/vmcp/vmcp/pkg/dispatch/legacy"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// One 2025-03-26 batch is refused whole when it holds more messages than
// legacydispatch.MaxBatch, before any of it reaches a backend; one at the bound is
// served. Regression: every member of a batch was sent at once: a 2.3 MB
// batch of 20,000 calls (well under http.max_body_bytes) had 20,000
// backend requests in flight and took vmcp from 33 MB to 506 MB RSS.
func TestHugeBatchSentEveryCallAtOnce(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	h := harness.StartBackend(t, "hb", harness.Stateful, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "count", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				calls.Add(1)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
	})
	v := harness.StartVMCP(t, nil, h.Config())
	awaitTools(t, v, "hb_count")
	c := raConnect(t, v, `{}`)
	batchOf := func(n int) string {
		members := make([]string, n)
		for i := range members {
			members[i] = fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"hb_count","arguments":{}}}`, i+1)
		}
		return "[" + strings.Join(members, ",") + "]"
	}

	rc := c.startBatch(batchOf(20000))
	require.Equal(t, http.StatusBadRequest, <-rc.status, "a batch over the bound")
	m := rc.next(t, "the refusal")
	require.Equal(t, -32600, m.errorCode())
	require.Contains(t, m.raw, fmt.Sprintf("at most %d messages", legacydispatch.MaxBatch))

	results, _ := c.batch(t, batchOf(legacydispatch.MaxBatch), legacydispatch.MaxBatch)
	require.Len(t, results, legacydispatch.MaxBatch, "a batch at the bound is served")
	require.Equal(t, int64(legacydispatch.MaxBatch), calls.Load(), "only the batch at the bound reached the backend")
}

// A 2025-03-26 batch whose requests repeat an id is refused whole.
// Regression: the go-sdk served one of the two and dropped the other with
// no response, where a repeated in-flight id outside a batch gets 400.
func TestBatchWithRepeatedIDDroppedOneUnanswered(t *testing.T) {
	t.Parallel()
	h := harness.StartBackend(t, "hr", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := harness.StartVMCP(t, nil, h.Config())
	awaitTools(t, v, "hr_echo")
	c := raConnect(t, v, `{}`)
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"hr_echo","arguments":{"text":"x"}}}`
	rc := c.startBatch("[" + call + "," + call + "]")
	require.Equal(t, http.StatusBadRequest, <-rc.status, "a batch repeating an id")
	m := rc.next(t, "the refusal")
	require.Equal(t, -32600, m.errorCode())
	require.Contains(t, m.raw, "repeats request id")
}
