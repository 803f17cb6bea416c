package integration

// Attacks on the relay on a Modern session that held (relay_modern_adv_test.go
// has the backend by hand, advBackend): each pins the behaviour found.

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// advMeta is the request's params._meta as posted.
func advMeta(req map[string]json.RawMessage) map[string]json.RawMessage {
	var p struct {
		Meta map[string]json.RawMessage `json:"_meta"`
	}
	_ = json.Unmarshal(req["params"], &p)
	return p.Meta
}

// A backend that asks forever is stopped after 32 rounds with an error,
// whether it asks something or nothing.
func TestModernHeldInputRequiredForever(t *testing.T) {
	for name, result := range map[string]string{
		"asks":    advElicit + `,"requestState":"again"}`,
		"nothing": `{"resultType":"input_required","inputRequests":{}}`,
	} {
		t.Run(name, func(t *testing.T) {
			ab := startAdvBackend(t, func(w http.ResponseWriter, req map[string]json.RawMessage, _ int64) {
				advSSE(w, advResult(req, result))
			})
			got := advCall(t, advVMCP(t, ab))
			require.Contains(t, got, "more than 32 input rounds")
			require.EqualValues(t, 33, ab.posts.Load())
		})
	}
}

// A client that declared no elicitation gets a clear error at once; the
// backend is not asked again.
func TestModernHeldUndeclaredElicitation(t *testing.T) {
	ab := startAdvBackend(t, func(w http.ResponseWriter, req map[string]json.RawMessage, _ int64) {
		advSSE(w, advResult(req, advElicit+`,"requestState":"s"}`))
	})
	v := advVMCP(t, ab)
	cs := v.Connect(t, legacy, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	_, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "ev_evil", Arguments: map[string]any{}})
	require.ErrorContains(t, err, "client does not support elicitation")
	require.EqualValues(t, 1, ab.posts.Load())
}

// A JSON body instead of SSE, an odd-typed resultType, and the backend's
// reserved _meta keys: the rounds run and the result is made Legacy.
func TestModernHeldJSONBodiesAndOddResultType(t *testing.T) {
	ab := startAdvBackend(t, func(w http.ResponseWriter, req map[string]json.RawMessage, n int64) {
		w.Header().Set("Content-Type", "application/json")
		if n == 1 {
			_, _ = w.Write([]byte(advResult(req, advElicit+`,"requestState":"s1"}`)))
			return
		}
		var p struct {
			State string                     `json:"requestState"`
			Resp  map[string]json.RawMessage `json:"inputResponses"`
		}
		_ = json.Unmarshal(req["params"], &p)
		text := p.State + ":" + string(p.Resp["q"])
		_, _ = w.Write([]byte(advResult(req, `{"resultType":7,"content":[{"type":"text","text":`+jsonOf(text)+`}],"_meta":{"io.modelcontextprotocol/x":1,"keep":true}}`)))
	})
	got := advCall(t, advVMCP(t, ab))
	require.Contains(t, got, `s1:{\"action\":\"accept\"`)
	require.NotContains(t, got, "resultType")
	require.NotContains(t, got, "io.modelcontextprotocol/x")
	require.Contains(t, got, `"keep":true`)
}

// Progress under another token is dropped; the call's own arrives. A
// second call is the sentinel: the client handles notifications in the
// order they arrive, so once its progress is seen, anything the first
// call's stream carried has been seen too.
func TestModernHeldProgressOtherToken(t *testing.T) {
	ab := startAdvBackend(t, func(w http.ResponseWriter, req map[string]json.RawMessage, n int64) {
		tok := advMeta(req)["progressToken"]
		advSSE(w, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"other","progress":1}}`,
			`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":`+string(tok)+`,"progress":`+fmt.Sprint(n+1)+`}}`,
			advResult(req, `{"content":[]}`))
	})
	v := advVMCP(t, ab)
	var got seen[float64]
	cs := v.Connect(t, legacy, &mcp.ClientOptions{ProgressNotificationHandler: func(_ context.Context, r *mcp.ProgressNotificationClientRequest) {
		got.add(r.Params.Progress)
	}})
	for _, tok := range []string{"mine", "sentinel"} {
		_, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "ev_evil", Arguments: map[string]any{}, Meta: mcp.Meta{"progressToken": tok}})
		require.NoError(t, err)
	}
	got.await(t, 3.0)
	require.Equal(t, []float64{2, 3}, got.all(), "each call's own progress, nothing under the other token")
}

// Logs reach only the session that set a level; the level is in the
// _meta of that session's posts only. A last call on each session, with a
// level set, is the sentinel: once its log is seen, every earlier one
// (handled in order of arrival) has been too.
func TestModernHeldLogLevelIsolation(t *testing.T) {
	ab := startAdvBackend(t, func(w http.ResponseWriter, req map[string]json.RawMessage, n int64) {
		lvl := string(advMeta(req)["io.modelcontextprotocol/logLevel"])
		advSSE(w, `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":`+jsonOf(fmt.Sprint(n, lvl))+`}}`,
			advResult(req, `{"content":[{"type":"text","text":`+jsonOf(lvl)+`}]}`))
	})
	v := advVMCP(t, ab)
	logs := map[string]*seen[string]{"set": {}, "unset": {}}
	conn := func(k string) *mcp.ClientSession {
		return v.Connect(t, legacy, &mcp.ClientOptions{LoggingMessageHandler: func(_ context.Context, r *mcp.LoggingMessageRequest) {
			logs[k].add(fmt.Sprint(r.Params.Data))
		}})
	}
	set, unset := conn("set"), conn("unset")
	require.NoError(t, set.SetLoggingLevel(ctx(t), &mcp.SetLoggingLevelParams{Level: "info"}))
	for range 5 {
		require.Equal(t, `"info"`, callText(t, set, "ev_evil", ""))
		require.Equal(t, "", callText(t, unset, "ev_evil", ""))
	}
	require.NoError(t, unset.SetLoggingLevel(ctx(t), &mcp.SetLoggingLevelParams{Level: "info"}))
	require.Equal(t, `"info"`, callText(t, set, "ev_evil", ""))
	require.Equal(t, `"info"`, callText(t, unset, "ev_evil", ""))
	logs["set"].await(t, `11"info"`)
	logs["unset"].await(t, `12"info"`)
	require.Equal(t, []string{`1"info"`, `3"info"`, `5"info"`, `7"info"`, `9"info"`, `11"info"`}, logs["set"].all())
	require.Equal(t, []string{`12"info"`}, logs["unset"].all(), "no log of the calls made without a level")
}

// seen is what a client's handler received, in order.
type seen[T comparable] struct {
	mu   sync.Mutex
	list []T
}

func (s *seen[T]) add(v T) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.list = append(s.list, v)
}

func (s *seen[T]) all() []T {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]T(nil), s.list...)
}

// await waits until v has been received.
func (s *seen[T]) await(t *testing.T, v T) {
	t.Helper()
	require.Eventually(t, func() bool { return slices.Contains(s.all(), v) }, raWait, 5*time.Millisecond, "%v never arrived: %v", v, s.all())
}

// 404 and 500 and a backend gone mid-call are errors, not hangs.
func TestModernHeldBackendStatusAndDeath(t *testing.T) {
	for name, fake := range map[string]func(http.ResponseWriter, map[string]json.RawMessage, int64){
		"404": func(w http.ResponseWriter, _ map[string]json.RawMessage, _ int64) { http.NotFound(w, nil) },
		"500": func(w http.ResponseWriter, _ map[string]json.RawMessage, _ int64) {
			http.Error(w, "boom", http.StatusInternalServerError)
		},
		"cut": func(w http.ResponseWriter, req map[string]json.RawMessage, _ int64) {
			advSSE(w, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}}`)
			w.(http.Flusher).Flush()
			panic(http.ErrAbortHandler)
		},
	} {
		t.Run(name, func(t *testing.T) {
			ab := startAdvBackend(t, fake)
			got := advCall(t, advVMCP(t, ab))
			require.True(t, strings.HasPrefix(got, "error: "), "got %s", got)
			t.Log(got)
		})
	}
}

// A client _meta that is not an object is -32602; escaped and
// case-variant reserved keys never replace vmcp's own.
func TestModernHeldClientMeta(t *testing.T) {
	ab := startAdvBackend(t, func(w http.ResponseWriter, req map[string]json.RawMessage, _ int64) {
		advSSE(w, advResult(req, `{"content":[{"type":"text","text":`+jsonOf(string(req["params"]))+`}]}`))
	})
	v := advVMCP(t, ab)
	c := raConnect(t, v, `{}`)
	for _, meta := range []string{`[1]`, `"x"`, `5`} {
		_, msgs := c.post(t, raCallBody(`"m"`, "ev_evil", `,"arguments":{},"_meta":`+meta))
		require.Len(t, msgs, 1)
		require.Equal(t, -32602, msgs[0].errorCode(), "meta %s: %s", meta, msgs[0].raw)
	}
	_, msgs := c.post(t, raCallBody(`"e"`, "ev_evil", `,"arguments":{},"_meta":{"io.modelcontextprotocol\/clientCapabilities":{"elicitation":{}},"io.modelcontextprotocol/clientInfo":{"name":"forged"}}`))
	require.Len(t, msgs, 1)
	params := msgs[0].text()
	require.NotContains(t, params, "forged")
	require.NotContains(t, params, "elicitation")
	require.Contains(t, params, `"io.modelcontextprotocol/clientCapabilities":{}`)
}

// advAsked starts ev_evil on a raw client declaring elicitation and
// returns the call once vmcp asks the client the backend's question.
func advAsked(t *testing.T, ab *advBackend) (*raClient, *raCall, raMsg) {
	t.Helper()
	v := advVMCP(t, ab)
	c := raConnect(t, v, `{"elicitation":{}}`)
	rc := c.start(raCallBody(`"c1"`, "ev_evil", `,"arguments":{}`))
	ask := rc.next(t, "the elicitation")
	require.Equal(t, "elicitation/create", ask.Method, ask.raw)
	return c, rc, ask
}

// The client cancelling while vmcp waits on its elicitation answer ends
// the call: no response, the ask is withdrawn, the backend is not asked
// again, and a late answer is harmless.
func TestModernHeldCancelWhileAsking(t *testing.T) {
	ab := startAdvBackend(t, func(w http.ResponseWriter, req map[string]json.RawMessage, _ int64) {
		advSSE(w, advResult(req, advElicit+`,"requestState":"s"}`))
	})
	c, rc, ask := advAsked(t, ab)
	status, _ := c.post(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"c1"}}`)
	require.Equal(t, http.StatusAccepted, status)
	for _, m := range rc.end(t, "the cancelled call") {
		require.NotEmpty(t, m.Method, "no response to a cancelled call: %s", m.raw)
	}
	status, _ = c.post(t, `{"jsonrpc":"2.0","id":`+string(ask.ID)+`,"result":{"action":"decline"}}`)
	require.Less(t, status, 500)
	require.EqualValues(t, 1, ab.posts.Load())
}

// DELETE of the session while vmcp waits on the client ends the call.
func TestModernHeldDeleteWhileAsking(t *testing.T) {
	ab := startAdvBackend(t, func(w http.ResponseWriter, req map[string]json.RawMessage, _ int64) {
		advSSE(w, advResult(req, advElicit+`,"requestState":"s"}`))
	})
	c, rc, _ := advAsked(t, ab)
	req, _ := http.NewRequest(http.MethodDelete, c.url, nil)
	req.Header.Set("Mcp-Session-Id", c.sid)
	req.Header.Set("Mcp-Protocol-Version", legacyVersion)
	resp, err := c.hc.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	rc.end(t, "the call of the deleted session")
	require.EqualValues(t, 1, ab.posts.Load())
}

// Sampling and roots asked in one input_required round reach the Legacy
// client and their answers the backend; two sessions answering
// differently, concurrently, each get their own.
func TestModernHeldSamplingRootsRoundsIsolated(t *testing.T) {
	b := harness.StartBackend(t, "sl", harness.Stateless, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			if req.Params.RequestState == "" {
				return &mcp.CallToolResult{RequestState: "r1", InputRequests: mcp.InputRequestMap{
					"s": &mcp.CreateMessageParams{MaxTokens: 5, Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "capital?"}}}},
					"r": &mcp.ListRootsParams{}}}, nil
			}
			cm, _ := req.Params.InputResponses["s"].(*mcp.CreateMessageWithToolsResult)
			lr, _ := req.Params.InputResponses["r"].(*mcp.ListRootsResult)
			if cm == nil || lr == nil || len(lr.Roots) != 1 || len(cm.Content) != 1 {
				return nil, fmt.Errorf("answers missing: %#v", req.Params.InputResponses)
			}
			return textResultOf(cm.Content[0].(*mcp.TextContent).Text + " " + lr.Roots[0].URI), nil
		})
	})
	v := harness.StartVMCP(t, nil, b.Config())
	awaitTools(t, v, "sl_ask")
	conn := func(city, root string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: city, Version: "t"}, &mcp.ClientOptions{
			Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}, Sampling: &mcp.SamplingCapabilities{}},
			CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
				return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: city}}, nil
			}})
		c.AddRoots(&mcp.Root{URI: root})
		cs, err := c.Connect(ctx(t), &mcp.StreamableClientTransport{Endpoint: v.URL}, &mcp.ClientSessionOptions{ProtocolVersion: legacy})
		require.NoError(t, err)
		t.Cleanup(func() { _ = cs.Close() })
		return cs
	}
	sessions := []*mcp.ClientSession{conn("Paris", "file:///p"), conn("Rome", "file:///r")}
	want := []string{"Paris file:///p", "Rome file:///r"}
	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[string]int{}
	for i := range 20 {
		wg.Go(func() {
			res, err := sessions[i%2].CallTool(ctx(t), &mcp.CallToolParams{Name: "sl_ask"})
			text := fmt.Sprint(err)
			if err == nil {
				text = harness.Text(t, res)
			}
			mu.Lock()
			got[fmt.Sprint(i%2, text)]++
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Equal(t, map[string]int{"0" + want[0]: 10, "1" + want[1]: 10}, got)
	require.Equal(t, 20.0, relayed(v, "tools/call"))
}

// The client's notifications/cancelled and the backend timeout end a
// stateless backend's handler (the relay closes the call's stream); the
// cancelled call gets no response, the timed-out one an error.
func TestModernHeldCancelAndTimeoutEndHandler(t *testing.T) {
	started, ended := make(chan struct{}, 4), make(chan struct{}, 4)
	b := harness.StartBackend(t, "sl", harness.StatelessCancelling, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			<-ctx.Done()
			ended <- struct{}{}
			return nil, ctx.Err()
		})
	})
	cfg := b.Config()
	cfg.Timeout = config.Duration(2 * time.Second)
	v := harness.StartVMCP(t, nil, cfg)
	awaitTools(t, v, "sl_block")
	c := raConnect(t, v, `{}`)
	rc := c.start(raCallBody(`"k"`, "sl_block", `,"arguments":{}`))
	<-started
	status, _ := c.post(t, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"k"}}`)
	require.Equal(t, http.StatusAccepted, status)
	require.Empty(t, rc.end(t, "the cancelled call"))
	require.Equal(t, http.StatusOK, <-rc.status)
	select {
	case <-ended:
	case <-time.After(raWait):
		t.Fatal("the cancelled call's handler still runs")
	}
	_, msgs := c.post(t, raCallBody(`"t"`, "sl_block", `,"arguments":{}`))
	require.Len(t, msgs, 1)
	require.Contains(t, msgs[0].raw, "timed out")
	select {
	case <-ended:
	case <-time.After(raWait):
		t.Fatal("the timed-out call's handler still runs")
	}
}

// A log level the client made up does not break its later calls.
func TestModernHeldBogusLogLevel(t *testing.T) {
	b := harness.StartBackend(t, "sl", harness.Stateless, func(s *mcp.Server) { echoTool(s, "sl", "echo") })
	v := harness.StartVMCP(t, nil, b.Config())
	awaitTools(t, v, "sl_echo")
	c := raConnect(t, v, `{}`)
	_, msgs := c.post(t, `{"jsonrpc":"2.0","id":"l","method":"logging/setLevel","params":{"level":"bogus"}}`)
	t.Log(msgs[0].raw)
	_, msgs = c.post(t, raCallBody(`"e"`, "sl_echo", `,"arguments":{"text":"hi"}`))
	require.Len(t, msgs, 1)
	require.Equal(t, "sl/echo:hi", msgs[0].text())
}

// A stateless backend going down mid-call fails the call at once.
func TestModernHeldBackendClosedMidCall(t *testing.T) {
	started, release := make(chan struct{}, 1), make(chan struct{})
	b := harness.StartBackend(t, "sl", harness.Stateless, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_ = req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: req.Params.GetProgressToken(), Progress: 1})
			started <- struct{}{}
			<-release // the handler outlives its connection (no PropagateRequestCancellation)
			return textResultOf("late"), nil
		})
	})
	cfg := b.Config()
	cfg.Timeout = config.Duration(5 * time.Minute)
	v := harness.StartVMCP(t, nil, cfg)
	awaitTools(t, v, "sl_block")
	c := raConnect(t, v, `{}`)
	rc := c.start(raCallBody(`"d"`, "sl_block", `,"arguments":{},"_meta":{"progressToken":"p"}`))
	<-started
	go b.Close() // returns once the handler does
	m := rc.response(t, "the response of the call whose backend died")
	close(release)
	require.NotZero(t, m.errorCode(), m.raw)
}
