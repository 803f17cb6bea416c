package integration

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// lateProgress is what a noisy tool leaves behind: its session and the
// progress token its call sent, to send progress after the call ended.
type lateProgress struct {
	ss    *mcp.ServerSession
	token any
}

// addNoisy registers "noisy": one progress with the call's own token, one
// with a token nobody sent, then the result; the session and token go to
// late, so the test can send progress once the call has ended.
func addNoisy(s *mcp.Server, late chan<- lateProgress) {
	s.AddTool(&mcp.Tool{Name: "noisy", InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tok := req.Params.GetProgressToken()
		err1 := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: 1})
		err2 := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "nobody-sent-this", Progress: 2})
		late <- lateProgress{ss: req.Session, token: tok}
		return flowResult("noisy:%v:%v", err1, err2), nil
	})
}

// TestRelayForwardedForeignAndLateProgress pins issue 13's relay leak: a
// Legacy client's relayed call got progress with a token nobody sent, and
// progress arriving after the call ended went to its GET stream. On every
// path (relay, go-sdk session, Modern shared connection) both are dropped
// and counted in vmcp_progress_dropped_total{backend,reason}; the client
// sees only its own call's progress.
func TestRelayForwardedForeignAndLateProgress(t *testing.T) {
	late := make(chan lateProgress, 1)
	http := harness.StartBackend(t, "lb", harness.Stateful, func(s *mcp.Server) { addNoisy(s, late) })
	v := harness.StartVMCP(t, nil, http.Config(), startSSEBackend(t, "sse", func(s *mcp.Server) { addNoisy(s, late) }))
	awaitTools(t, v, "lb_noisy", "sse_noisy")
	dropped := v.Server.Metrics().ProgressDropped
	for _, client := range []string{"legacy", "modern"} {
		for _, backend := range []string{"lb", "sse"} {
			t.Run(client+" client, backend "+backend, func(t *testing.T) {
				var fc *flowClient
				if client == "legacy" {
					fc = connectFlow(t, v, "p", nil)
				} else {
					fc = connectModern(t, v, "p", nil)
				}
				unknown, after := dropped.WithLabelValues(backend, "unknown_token"), dropped.WithLabelValues(backend, "after_end")
				u0, a0 := testutil.ToFloat64(unknown), testutil.ToFloat64(after)
				res, err := fc.call(flowCtx(t), backend+"_noisy", nil, "mine")
				require.Equal(t, "noisy:<nil>:<nil>", flowText(res, err))
				lp := <-late
				// the late progress travels on vmcp's GET stream to the backend
				// session, which may still be connecting: the backend retries
				require.Eventually(t, func() bool {
					return lp.ss.NotifyProgress(context.Background(), &mcp.ProgressNotificationParams{ProgressToken: lp.token, Progress: 3}) == nil
				}, stateWait, 5*time.Millisecond, "the backend could not send its late progress")
				require.Eventually(t, func() bool { return testutil.ToFloat64(after) > a0 }, stateWait, 5*time.Millisecond, "late progress not dropped as after_end")
				assert.Equal(t, 1.0, testutil.ToFloat64(unknown)-u0, "foreign token not dropped as unknown_token")
				assert.Equal(t, 1, fc.wireCount("notifications/progress"), "only the call's own progress reaches the client")
			})
		}
	}
}

// addNullToken registers "nulltok": one progress with "progressToken":
// null, then the result.
func addNullToken(s *mcp.Server) {
	s.AddTool(&mcp.Tool{Name: "nulltok", InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: nil, Progress: 1})
		return flowResult("nulltok:%v", err), nil
	})
}

// TestRelayForwardedProgressWithNullToken pins a backend's progress with
// "progressToken": null, which belongs to no request: on every path
// (relay, go-sdk session, Modern shared connection), whether the call sent
// a token or not, it is never forwarded, and it is counted as
// vmcp_progress_dropped_total{reason="no_token"} (it was counted as a
// token no call sent, unknown_token, as if it had one).
func TestRelayForwardedProgressWithNullToken(t *testing.T) {
	lb := harness.StartBackend(t, "lb", harness.Stateful, addNullToken)
	v := harness.StartVMCP(t, nil, lb.Config(), startSSEBackend(t, "sse", addNullToken))
	awaitTools(t, v, "lb_nulltok", "sse_nulltok")
	dropped := v.Server.Metrics().ProgressDropped
	for _, client := range []string{"legacy", "modern"} {
		for _, backend := range []string{"lb", "sse"} {
			for _, tok := range []any{"mine", nil} {
				t.Run(fmt.Sprintf("%s client, backend %s, token %v", client, backend, tok), func(t *testing.T) {
					fc := connectFlow(t, v, "p", nil)
					if client == "modern" {
						fc = connectModern(t, v, "p", nil)
					}
					none, unknown := dropped.WithLabelValues(backend, "no_token"), dropped.WithLabelValues(backend, "unknown_token")
					n0, u0 := testutil.ToFloat64(none), testutil.ToFloat64(unknown)
					res, err := fc.call(flowCtx(t), backend+"_nulltok", nil, tok)
					require.Equal(t, "nulltok:<nil>", flowText(res, err))
					// the progress precedes the result on its stream: counted by now
					assert.Eventually(t, func() bool { return testutil.ToFloat64(none) > n0 }, stateWait, 5*time.Millisecond, "progress without a token not counted as no_token")
					assert.Equal(t, 1.0, testutil.ToFloat64(none)-n0, "counted once")
					assert.Equal(t, u0, testutil.ToFloat64(unknown), "not counted as a token no call sent")
					assert.Zero(t, fc.wireCount("notifications/progress"), "never forwarded to the client")
				})
			}
		}
	}
}
