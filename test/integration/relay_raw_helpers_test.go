package integration

// Adversarial tests of the Legacy relay (pkg/dispatch/legacy/relay*.go,
// idle.go, pkg/backends/relay.go, sse.go): a Legacy client's tools/call,
// resources/read and prompts/get routed to a Legacy streamable HTTP backend
// are relayed as raw JSON-RPC on the client's own backend session. Most
// tests drive vmcp with a raw HTTP client (raClient) so that they can send
// what a go-sdk client never would. Everything here is prefixed "ra".
//
// Each test pins a failure found by attacking the relay; the helpers
// are in relay_raw_helpers_test.go.

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// raWait bounds every wait for an event in these tests.
const raWait = 20 * time.Second

// raMsg is one JSON-RPC message read off a response, fields left raw.
type raMsg struct {
	wire.Message
	raw string
}

// errorCode is the code of an error response (0 if none).
func (m raMsg) errorCode() int {
	var e struct {
		Code int `json:"code"`
	}
	_ = json.Unmarshal(m.Error, &e)
	return e.Code
}

// text is the first text content of a tools/call result, or a description
// of the message.
func (m raMsg) text() string {
	var r struct {
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		IsError bool `json:"isError"`
	}
	if len(m.Error) > 0 || json.Unmarshal(m.Result, &r) != nil || len(r.Content) == 0 {
		return "message: " + m.raw
	}
	if r.IsError {
		return "tool error: " + r.Content[0].Text
	}
	return r.Content[0].Text
}

// raClient is a hand-driven Legacy client session.
type raClient struct {
	url string
	sid string
	hc  *http.Client
}

// raConnect initializes a Legacy session with the given capabilities JSON
// and sends notifications/initialized.
func raConnect(t *testing.T, v *harness.VMCP, caps string) *raClient {
	t.Helper()
	c := &raClient{url: v.URL, hc: &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}}
	t.Cleanup(c.hc.CloseIdleConnections)
	body := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":` + caps + `,"clientInfo":{"name":"ra","version":"test"}}}`
	status, hdr, _ := c.do(t, "", body)
	require.Equal(t, http.StatusOK, status, "initialize")
	c.sid = hdr.Get("Mcp-Session-Id")
	require.NotEmpty(t, c.sid)
	status, _, _ = c.do(t, c.sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	require.Equal(t, http.StatusAccepted, status, "notifications/initialized")
	t.Cleanup(func() {
		req, _ := http.NewRequest(http.MethodDelete, c.url, nil)
		req.Header.Set("Mcp-Session-Id", c.sid)
		req.Header.Set("Mcp-Protocol-Version", legacyVersion)
		if resp, err := c.hc.Do(req); err == nil {
			resp.Body.Close()
		}
	})
	return c
}

func (c *raClient) request(ctx context.Context, sid, body string) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, c.url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", legacyVersion)
	if sid != "" {
		req.Header.Set("Mcp-Session-Id", sid)
	}
	return req
}

// do POSTs body and reads the whole response: status, header and the
// JSON-RPC messages in it (JSON body or SSE events).
func (c *raClient) do(t *testing.T, sid, body string) (int, http.Header, []raMsg) {
	t.Helper()
	resp, err := c.hc.Do(c.request(flowCtx(t), sid, body))
	require.NoError(t, err)
	defer resp.Body.Close()
	var msgs []raMsg
	for m := range raMessages(resp) {
		msgs = append(msgs, m)
	}
	return resp.StatusCode, resp.Header, msgs
}

// post is do on the client's session.
func (c *raClient) post(t *testing.T, body string) (int, []raMsg) {
	t.Helper()
	status, _, msgs := c.do(t, c.sid, body)
	return status, msgs
}

// raMessages yields the JSON-RPC messages of a response body: one for an
// application/json body, one per SSE event otherwise; a body that is
// neither yields one message whose raw is the text.
func raMessages(resp *http.Response) func(func(raMsg) bool) {
	return func(yield func(raMsg) bool) {
		emit := func(data []byte) bool {
			m := raMsg{raw: string(data)}
			_ = json.Unmarshal(data, &m)
			return yield(m)
		}
		if !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b, _ := io.ReadAll(resp.Body)
			if len(bytes.TrimSpace(b)) > 0 {
				emit(b)
			}
			return
		}
		r := bufio.NewReaderSize(resp.Body, 1<<16)
		var data []byte
		for {
			line, err := r.ReadString('\n')
			line = strings.TrimRight(line, "\r\n")
			if line == "" && len(data) > 0 {
				if !emit(data) {
					return
				}
				data = nil
			} else if d, ok := strings.CutPrefix(line, "data:"); ok {
				if len(data) > 0 {
					data = append(data, '\n')
				}
				data = append(data, strings.TrimPrefix(d, " ")...)
			}
			if err != nil {
				if len(data) > 0 {
					emit(data)
				}
				return
			}
		}
	}
}

// raCall is a POST in flight whose messages are read as they arrive.
type raCall struct {
	status chan int   // the HTTP status, once headers arrive (-1: no response)
	msgs   chan raMsg // closed at the end of the response
	cut    context.CancelFunc
}

// start POSTs body on the session without waiting.
func (c *raClient) start(body string) *raCall {
	ctx, cancel := context.WithCancel(context.Background())
	rc := &raCall{status: make(chan int, 1), msgs: make(chan raMsg, 256), cut: cancel}
	go func() {
		defer close(rc.msgs)
		resp, err := c.hc.Do(c.request(ctx, c.sid, body))
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

// next returns the call's next message; it fails the test if the
// response ends or nothing comes within raWait.
func (rc *raCall) next(t *testing.T, what string) raMsg {
	t.Helper()
	select {
	case m, ok := <-rc.msgs:
		if !ok {
			t.Fatalf("%s: the response ended", what)
		}
		return m
	case <-time.After(raWait):
		t.Fatalf("%s: nothing within %s", what, raWait)
	}
	return raMsg{}
}

// response skips to the call's response (a message without method).
func (rc *raCall) response(t *testing.T, what string) raMsg {
	t.Helper()
	for {
		if m := rc.next(t, what); m.Method == "" {
			return m
		}
	}
}

// end waits for the response to end and returns the messages left.
func (rc *raCall) end(t *testing.T, what string) []raMsg {
	t.Helper()
	var rest []raMsg
	timeout := time.After(raWait)
	for {
		select {
		case m, ok := <-rc.msgs:
			if !ok {
				return rest
			}
			rest = append(rest, m)
		case <-timeout:
			t.Fatalf("%s: the response did not end within %s", what, raWait)
		}
	}
}

// raCallBody is a tools/call request with a raw id and raw params tail
// (after the name), e.g. `,"arguments":{}`.
func raCallBody(id, name, tail string) string {
	return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":` + jsonOf(name) + tail + `}}`
}

// raMarker is the arguments tail of a flows tool call with a marker.
func raMarker(marker string) string { return `,"arguments":{"marker":` + jsonOf(marker) + `}` }

// addMetaKeysTool: returns the sorted _meta keys the backend received,
// comma separated.
func addMetaKeysTool(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: flowSchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		keys := make([]string, 0, len(req.Params.Meta))
		for k := range req.Params.Meta {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		return flowResult("meta:%s", strings.Join(keys, ",")), nil
	})
}

// addReservedResultTool: a result whose _meta has a reserved key besides
// its own "keep".
func addReservedResultTool(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: flowSchema}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		r := flowResult("reserved")
		r.Meta = mcp.Meta{"io.modelcontextprotocol/related-task": map[string]any{"taskId": "t1"}, "keep": "yes"}
		return r, nil
	})
}

// raBackend starts a stateful backend with the relay tests' tools, a
// blocker and a cancellation recorder; the blocker is released at cleanup.
func raBackend(t *testing.T, name string, hopts *mcp.StreamableHTTPOptions, setup func(*mcp.Server)) (*harness.Backend, *blocker, *cancelRecorder) {
	t.Helper()
	bl, cancels := newBlocker(), &cancelRecorder{}
	b := flowBackend(t, name, harness.Stateful, nil, hopts, func(s *mcp.Server) {
		bl.add(s, "block")
		addProgressTool(s, "progress")
		addElicitTool(s, "elicit")
		addMetaKeysTool(s, "meta")
		addReservedResultTool(s, "reserved")
		echoTool(s, name, "echo")
		s.AddReceivingMiddleware(cancels.middleware)
		if setup != nil {
			setup(s)
		}
	})
	t.Cleanup(bl.release)
	return b, bl, cancels
}

// raVMCP starts vmcp over backends with a long backend timeout (so a hang
// shows as a test timeout, not as vmcp's own timeout) and waits for tools.
func raVMCP(t *testing.T, mutate func(*config.Config), tools []string, bs ...*harness.Backend) *harness.VMCP {
	t.Helper()
	cfgs := make([]config.Backend, 0, len(bs))
	for _, b := range bs {
		c := b.Config()
		c.Timeout = config.Duration(5 * time.Minute)
		cfgs = append(cfgs, c)
	}
	v := harness.StartVMCP(t, mutate, cfgs...)
	awaitTools(t, v, tools...)
	return v
}
