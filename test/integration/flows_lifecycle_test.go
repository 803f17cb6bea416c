package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestCancelledCallCancelsBackendHandlerAndSessionStaysUsable pins a
// cancellation that stops at vmcp: the client cancels a call blocked in a
// backend tool → the backend handler's context is cancelled (Stateful: the
// backend received notifications/cancelled), and the same client session
// then makes further calls, with progress, normally.
func TestCancelledCallCancelsBackendHandlerAndSessionStaysUsable(t *testing.T) {
	for _, mode := range []harness.Mode{harness.Stateful, harness.Stateless} {
		t.Run(mode.String(), func(t *testing.T) {
			bl, cancels := newBlocker(), &cancelRecorder{}
			// A Modern backend must treat a closed request stream as
			// cancellation (2026-07-28 streamable HTTP); the go-sdk does so
			// only with PropagateRequestCancellation.
			b := flowBackend(t, "b", mode, nil, &mcp.StreamableHTTPOptions{PropagateRequestCancellation: true}, func(s *mcp.Server) {
				bl.add(s, "block")
				addProgressTool(s, "progress")
				s.AddReceivingMiddleware(cancels.middleware)
			})
			v := harness.StartVMCP(t, nil, b.Config())
			t.Cleanup(bl.release)
			awaitTools(t, v, "b_block", "b_progress")
			c := connectFlow(t, v, "A", nil)
			for i := range 3 {
				marker := fmt.Sprintf("block-%d", i)
				cctx, cancel := context.WithCancel(flowCtx(t))
				errc := make(chan error, 1)
				go func() {
					_, err := c.call(cctx, "b_block", map[string]any{"marker": marker}, nil)
					errc <- err
				}()
				expect(t, bl.started, marker, "backend call started")
				cancel()
				select {
				case err := <-errc:
					require.ErrorIs(t, err, context.Canceled)
				case <-flowTimeout():
					t.Fatal("CallTool did not return after its context was cancelled")
				}
				expect(t, bl.done, marker, "backend handler's context cancelled")
				if mode == harness.Stateful {
					require.True(t, cancels.rec.await(func(ids []string) bool { return len(ids) > i }),
						"the backend never received notifications/cancelled")
				}
				checkProgressCall(t, c, "b_progress", fmt.Sprintf("after-cancel-%d", i), 5)
			}
			require.Equal(t, 1, v.Server.SessionCount())
		})
	}
}

// TestCancelledElicitationByBackendCancelsClientHandler pins a
// server-to-client request outliving its cancellation: a Stateful backend
// tool gives up waiting for an elicitation (cancels its Elicit, which sends
// notifications/cancelled to vmcp) and carries on; vmcp must cancel the
// elicitation it forwarded, so the client's handler sees its context
// cancelled, instead of the request staying open (and a vmcp goroutine
// waiting) until the user answers.
func TestCancelledElicitationByBackendCancelsClientHandler(t *testing.T) {
	asked, handlerDone, proceed, quit := make(chan string, 4), make(chan string, 4), make(chan string, 4), make(chan struct{})
	b := harness.StartBackend(t, "b", harness.Stateful, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "impatient", InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a := flowArgsOf(req)
			ectx, cancel := context.WithCancel(ctx)
			go func() { // give up once the user has been asked
				select {
				case <-asked:
				case <-quit:
				}
				cancel()
			}()
			_, err := req.Session.Elicit(ectx, &mcp.ElicitParams{Message: a.Marker, RequestedSchema: answerSchema})
			select { // carry on without the answer until the test has looked
			case <-proceed:
			case <-quit:
			}
			return flowResult("gave up:%v", err != nil), nil
		})
		addProgressTool(s, "progress")
	})
	v := harness.StartVMCP(t, nil, b.Config())
	awaitTools(t, v, "b_impatient")
	c := connectFlow(t, v, "A", &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{},
		ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			asked <- r.Params.Message
			select { // a user who takes their time
			case <-ctx.Done():
				handlerDone <- r.Params.Message
			case <-quit:
			}
			return &mcp.ElicitResult{Action: "cancel"}, nil
		},
	})
	t.Cleanup(func() { close(quit) })
	for i := range 3 {
		marker := fmt.Sprintf("ask-%d", i)
		errc := make(chan string, 1)
		go func() {
			res, err := c.call(flowCtx(t), "b_impatient", map[string]any{"marker": marker}, nil)
			errc <- flowText(res, err)
		}()
		expect(t, handlerDone, marker, "the client's elicitation handler's context cancelled")
		proceed <- marker
		select {
		case got := <-errc:
			require.Equal(t, "gave up:true", got)
		case <-flowTimeout():
			t.Fatal("the call did not complete")
		}
	}
	checkProgressCall(t, c, "b_progress", "after", 5)
}

// TestKilledClientMidCallEndsBackendSessionAndCancelsHandler pins a
// session delete that waited for the backend: the go-sdk server's session
// Close waits for in-flight requests, so a DELETE (or a client that
// vanished and whose session is then deleted) in the middle of a blocked
// call hung until the backend call timed out, with the backend handler and
// backend session alive all along. Now the DELETE cancels the session's
// in-flight calls: the blocked handler's context ends, the backend's
// session count goes back to the control connection's, vmcp's session
// count to 0, and the DELETE itself returns, long before the (5 minute)
// backend timeout.
func TestKilledClientMidCallEndsBackendSessionAndCancelsHandler(t *testing.T) {
	start := func(t *testing.T) (*blocker, *harness.Backend, *harness.VMCP, int) {
		bl, cancels := newBlocker(), &cancelRecorder{}
		b := harness.StartBackend(t, "b", harness.Stateful, func(s *mcp.Server) {
			bl.add(s, "block")
			s.AddReceivingMiddleware(cancels.middleware)
		})
		v := harness.StartVMCP(t, func(c *config.Config) { c.Backends[0].Timeout = config.Duration(5 * time.Minute) }, b.Config())
		t.Cleanup(bl.release)
		t.Cleanup(func() {
			if t.Failed() {
				t.Logf("the backend received notifications/cancelled for request IDs %v", cancels.rec.all())
			}
		})
		awaitTools(t, v, "b_block")
		require.Eventually(t, func() bool { return v.Server.SessionCount() == 0 }, flowWait, 5*time.Millisecond)
		return bl, b, v, awaitControlOnly(t, b)
	}
	// kill deletes session sid while marker's call is blocked and checks
	// that everything ends.
	kill := func(t *testing.T, bl *blocker, b *harness.Backend, v *harness.VMCP, baseline int, sid, marker string) {
		t.Helper()
		deleted := deleteSession(v, sid)
		expect(t, bl.done, marker, "blocked backend handler's context cancelled")
		awaitDeleted(t, deleted)
		awaitEnded(t, b, v, baseline)
	}

	// Each kill is repeated: the lost-cancellation race (cancelFlush) shows
	// only in some runs.
	t.Run("raw client cut, then DELETE", func(t *testing.T) {
		bl, b, v, baseline := start(t)
		for i := range 5 {
			marker := fmt.Sprintf("raw-%d", i)
			sid := rawInitialize(t, v.URL)
			callCtx, cut := context.WithCancel(context.Background())
			done := make(chan struct{})
			go func() {
				defer close(done)
				body := fmt.Sprintf(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"b_block","arguments":{"marker":%q}}}`, marker)
				resp, err := rawPost(callCtx, v.URL, sid, body)
				if err == nil {
					_, _ = io.Copy(io.Discard, resp.Body)
					resp.Body.Close()
				}
			}()
			expect(t, bl.started, marker, "backend call started")
			require.Equal(t, baseline+1, backendSessions(b), "the client's own backend session")
			cut() // the client is gone: its connection is closed
			<-done
			kill(t, bl, b, v, baseline, sid, marker)
		}
	})

	t.Run("go-sdk client session deleted mid-call", func(t *testing.T) {
		bl, b, v, baseline := start(t)
		for i := range 3 {
			marker := fmt.Sprintf("sdk-%d", i)
			c := connectFlow(t, v, marker, nil)
			errc := make(chan error, 1)
			go func() {
				_, err := c.call(flowCtx(t), "b_block", map[string]any{"marker": marker}, nil)
				errc <- err
			}()
			expect(t, bl.started, marker, "backend call started")
			require.Equal(t, baseline+1, backendSessions(b), "the client's own backend session")
			kill(t, bl, b, v, baseline, c.cs.ID(), marker)
			select {
			case err := <-errc:
				require.Error(t, err, "the call of a deleted session")
			case <-flowTimeout():
				t.Fatal("CallTool did not return after its session was deleted")
			}
		}
	})
}

// deleteSession sends DELETE for session sid; the status (-1: no
// response) arrives on the channel.
func deleteSession(v *harness.VMCP, sid string) <-chan int {
	deleted := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodDelete, v.URL, nil)
		req.Header.Set("Mcp-Session-Id", sid)
		req.Header.Set("Mcp-Protocol-Version", legacyVersion)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			deleted <- -1
			return
		}
		resp.Body.Close()
		deleted <- resp.StatusCode
	}()
	return deleted
}

func awaitDeleted(t *testing.T, deleted <-chan int) {
	t.Helper()
	select {
	case code := <-deleted:
		require.Equal(t, http.StatusNoContent, code, "DELETE")
	case <-flowTimeout():
		t.Fatal("DELETE did not return")
	}
}

// awaitControlOnly waits until b holds exactly what vmcp's control
// connection keeps open there and returns that count (1): on a Stateful
// backend its session, on a Stateless one its subscriptions/listen, whose
// request the go-sdk server counts as a session while it lasts. Read at
// once, the baseline missed a listen still opening on a busy machine, and
// the session's end then waited for a count it never went back to.
func awaitControlOnly(t *testing.T, b *harness.Backend) int {
	t.Helper()
	require.Eventually(t, func() bool { return backendSessions(b) == 1 }, flowWait, 5*time.Millisecond,
		"backend sessions: %d, want 1 (the control connection's)", backendSessions(b))
	return 1
}

// awaitEnded waits until b has only its control session (baseline) and
// vmcp no client session.
func awaitEnded(t *testing.T, b *harness.Backend, v *harness.VMCP, baseline int) {
	t.Helper()
	require.Eventually(t, func() bool { return backendSessions(b) == baseline }, flowWait, 5*time.Millisecond,
		"backend sessions: %d, want %d (the control connection only)", backendSessions(b), baseline)
	require.Eventually(t, func() bool { return v.Server.SessionCount() == 0 }, flowWait, 5*time.Millisecond,
		"vmcp client sessions: %d", v.Server.SessionCount())
}

// TestKilledClientWithPendingElicitationEndsSession pins a session delete
// that waited for the client: a DELETE while the client has not answered
// an elicitation vmcp forwarded (Stateful: the backend's own request, sent
// with a context the call's cancellation does not reach; Stateless: an
// MRTR input request vmcp asks itself) must not wait for that answer: the
// DELETE returns, the backend call ends and every session is gone.
func TestKilledClientWithPendingElicitationEndsSession(t *testing.T) {
	for _, mode := range []harness.Mode{harness.Stateful, harness.Stateless} {
		t.Run(mode.String(), func(t *testing.T) {
			ended := make(chan string, 4)
			b := harness.StartBackend(t, "b", mode, func(s *mcp.Server) {
				if mode == harness.Stateless {
					addAskTool(s, "ask")
					return
				}
				s.AddTool(&mcp.Tool{Name: "ask", InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					// Not cancelled with the call: only vmcp can end this request.
					_, err := req.Session.Elicit(context.WithoutCancel(ctx), &mcp.ElicitParams{Message: "pending", RequestedSchema: answerSchema})
					ended <- "pending"
					return flowFailure("elicit: %v", err), nil
				})
			})
			v := harness.StartVMCP(t, func(c *config.Config) { c.Backends[0].Timeout = config.Duration(5 * time.Minute) }, b.Config())
			awaitTools(t, v, "b_ask")
			require.Eventually(t, func() bool { return v.Server.SessionCount() == 0 }, flowWait, 5*time.Millisecond)
			baseline := awaitControlOnly(t, b)
			asked, quit := make(chan string, 4), make(chan struct{})
			c := connectFlow(t, v, "A", &mcp.ClientOptions{
				Capabilities: &mcp.ClientCapabilities{},
				ElicitationHandler: func(ctx context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked <- r.Params.Message
					select { // a user who never answers
					case <-ctx.Done():
					case <-quit:
					}
					return &mcp.ElicitResult{Action: "cancel"}, nil
				},
			})
			t.Cleanup(func() { close(quit) })
			errc := make(chan error, 1)
			go func() {
				_, err := c.call(flowCtx(t), "b_ask", map[string]any{"marker": "pending"}, nil)
				errc <- err
			}()
			expect(t, asked, "pending", "the client was asked")
			deleted := deleteSession(v, c.cs.ID())
			if mode == harness.Stateful {
				expect(t, ended, "pending", "the backend's Elicit returned")
			}
			awaitDeleted(t, deleted)
			awaitEnded(t, b, v, baseline)
			select {
			case err := <-errc:
				require.Error(t, err, "the call of a deleted session")
			case <-flowTimeout():
				t.Fatal("CallTool did not return after its session was deleted")
			}
		})
	}
}

func backendSessions(b *harness.Backend) int {
	n := 0
	for range b.Server.Sessions() {
		n++
	}
	return n
}

// rawPost sends one Legacy POST to vmcp (sid may be "").
func rawPost(ctx context.Context, url, sid, body string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte(body)))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", legacyVersion)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	return http.DefaultClient.Do(req)
}

// rawInitialize opens a Legacy session by hand and returns its ID.
func rawInitialize(t *testing.T, url string) string {
	t.Helper()
	resp, err := rawPost(flowCtx(t), url, "", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"test"}}}`)
	require.NoError(t, err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, resp.StatusCode, "initialize: %s", body)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid, "initialize: no session ID")
	resp, err = rawPost(flowCtx(t), url, sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusAccepted, resp.StatusCode, "notifications/initialized")
	return sid
}
