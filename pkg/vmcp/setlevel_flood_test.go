package vmcp_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// levelRefuser is a stateful backend with the tool "count" that refuses
// every logging/setLevel (as a server validating the level strictly
// refuses one it does not know) and records the levels it was sent.
func levelRefuser(t *testing.T) (*harness.Backend, func() []mcp.LoggingLevel) {
	var mu sync.Mutex
	var got []mcp.LoggingLevel
	b := harness.StartBackend(t, "lv", harness.Stateful, func(s *mcp.Server) {
		harness.AddCounter(s, "count")
		s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
			return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
				if p, ok := req.GetParams().(*mcp.SetLoggingLevelParams); ok {
					mu.Lock()
					got = append(got, p.Level)
					mu.Unlock()
					return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "level refused"}
				}
				return next(ctx, method, req)
			}
		})
	})
	return b, func() []mcp.LoggingLevel {
		mu.Lock()
		defer mu.Unlock()
		return append([]mcp.LoggingLevel(nil), got...)
	}
}

// A Legacy client repeating logging/setLevel that its backend refuses
// writes one log line a second (the next carrying how many were
// withheld). Regression: one WARN "logging/setLevel not applied to
// backend" per request and backend session, so a client could fill the
// operator's log (the backend's error text, multi-line, in each).
func TestRefusedSetLevelFloodWroteOneLogLineEach(t *testing.T) {
	t.Parallel()
	b, _ := levelRefuser(t)
	h, clk := &logged{}, &pinClock{now: time.Unix(1_700_000_000, 0)}
	v := harness.StartVMCPWithOptions(t, vmcp.Options{Logger: logr.FromSlogHandler(h), LogNow: clk.Now}, nil, b.Config())
	cs, _, err := connect(t, v.URL, "", "2025-11-25", nil)
	require.NoError(t, err)
	_, err = call(t, cs, "lv_count") // opens the backend session
	require.NoError(t, err)
	n := h.len()
	setLevel := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		_ = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"})
	}
	for range flood {
		setLevel()
	}
	checkFlood(t, h, n, clk, "logging/setLevel not applied to backend", setLevel)
}

// A Legacy client's logging/setLevel with a level MCP does not define is
// refused (-32602) and never sent to a backend. Regression: vmcp answered
// {} and sent "bogus" to every backend session (and to each opened later),
// where a strict server refuses it every time.
func TestBogusLogLevelWasAcceptedAndForwarded(t *testing.T) {
	t.Parallel()
	b, got := levelRefuser(t)
	v := harness.StartVMCP(t, nil, b.Config())
	cs, _, err := connect(t, v.URL, "", "2025-11-25", nil)
	require.NoError(t, err)
	_, err = call(t, cs, "lv_count")
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "bogus"})
	var je *jsonrpc.Error
	require.True(t, errors.As(err, &je), "a JSON-RPC error, got %v", err)
	assert.Equal(t, int64(jsonrpc.CodeInvalidParams), je.Code)
	assert.True(t, strings.Contains(je.Message, "bogus"), "the message names the level: %q", je.Message)
	require.NoError(t, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}), "a valid level after it")
	assert.NotContains(t, got(), mcp.LoggingLevel("bogus"), "the unknown level reached no backend")
	assert.Contains(t, got(), mcp.LoggingLevel("info"), "the valid one did")
}

// A backend that refuses logging/setLevel (it offers logging but
// rejects the level, or does not implement the method) still serves the
// calls of a client that set a level before the backend session opened.
// Regression: the refused setLevel at open (SessionOptions.Opened)
// closed the backend session, failing every call of that client session.
func TestRefusedSetLevelAtOpenFailedEveryCall(t *testing.T) {
	t.Parallel()
	b, _ := levelRefuser(t)
	v := harness.StartVMCP(t, nil, b.Config())
	cs, _, err := connect(t, v.URL, "", "2025-11-25", nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	require.NoError(t, cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "info"}))
	_, err = call(t, cs, "lv_count")
	require.NoError(t, err, "the call opening the backend session")
}
