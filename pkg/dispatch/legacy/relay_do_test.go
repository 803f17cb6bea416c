package legacy_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/dispatch/legacy"
	"github.com/vmcp/vmcp/pkg/wire"
)

// rbScript answers one tools/call POST of the relay's backend: m is the
// decoded request, n counts the tools/calls so far (1 for the first).
type rbScript func(rb *relayBackend, w http.ResponseWriter, r *http.Request, m *wire.Message, n int)

// relayBackend is an in-memory Legacy streamable HTTP backend: a go-sdk
// stateful server for the lifecycle and lists, whose tools/call POSTs a
// script answers as raw streamable HTTP; answers and cancellations vmcp
// posts are recorded.
type relayBackend struct {
	script  rbScript
	posted  chan *wire.Message
	started chan struct{} // one per tools/call, after the script is chosen
	mu      sync.Mutex
	calls   []string // the Mcp-Session-Id of each tools/call
	// completions are the ids of the completion/complete requests.
	completions []string
}

func startRelayBackend(t *testing.T, s rbScript) (*relayBackend, string) {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "b", Version: "test"}, &mcp.ServerOptions{
		CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"alpha"}}}, nil
		}})
	srv.AddPrompt(&mcp.Prompt{Name: "p", Arguments: []*mcp.PromptArgument{{Name: "x"}}},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{}, nil
		})
	srv.AddTool(&mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	rb := &relayBackend{script: s, posted: make(chan *wire.Message, 64), started: make(chan struct{}, 64)}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		data, _ := io.ReadAll(r.Body)
		var m wire.Message
		_ = wire.Decode(bytes.Clone(data), &m)
		switch {
		case m.Method == "tools/call":
			rb.mu.Lock()
			rb.calls = append(rb.calls, r.Header.Get("Mcp-Session-Id"))
			n := len(rb.calls)
			rb.mu.Unlock()
			rb.started <- struct{}{}
			rb.script(rb, w, r, &m, n)
			return
		case m.Method == "completion/complete":
			rb.mu.Lock()
			rb.completions = append(rb.completions, string(m.ID))
			rb.mu.Unlock()
		case m.Method == "" || m.Method == "notifications/cancelled":
			rb.posted <- &m
			w.WriteHeader(http.StatusAccepted)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return rb, hs.URL
}

// relayVMCP is a Legacy dispatcher over the one backend "b" at url, and a
// client session on it (initialized, capabilities caps); it returns the
// endpoint and the session id.
func relayVMCP(t *testing.T, url string, timeout time.Duration, caps string) (string, string) {
	t.Helper()
	log := slog.New(slog.DiscardHandler)
	agg := aggregator.New(aggregator.Policy{}, log)
	cfg := config.Backend{Name: "b", URL: url, Transport: config.TransportStreamableHTTP, Timeout: config.Duration(timeout)}
	mgr := backends.NewManager([]config.Backend{cfg}, agg, log, "test")
	mgr.Start(30 * time.Second)
	t.Cleanup(mgr.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	require.NoError(t, mgr.WaitReady(ctx))
	opts := completeOptions(agg, mgr, log)
	t.Cleanup(opts.Core.Close)
	d := legacy.New(agg, mgr, opts)
	srv := httptest.NewServer(d)
	t.Cleanup(srv.Close)
	t.Cleanup(d.Close)
	init := post(t, srv.URL, "", `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":`+caps+`,"clientInfo":{"name":"c","version":"1"}}}`)
	id := init.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, id)
	_, _ = io.ReadAll(init.Body)
	require.Equal(t, http.StatusAccepted, post(t, srv.URL, id, `{"jsonrpc":"2.0","method":"notifications/initialized"}`).StatusCode)
	return srv.URL, id
}

// clientStream reads a relayed call's response (a JSON body or SSE) one
// message at a time.
type clientStream struct {
	resp *http.Response
	er   *wire.EventReader
	json bool
}

// startCall posts a tools/call of b_t (id 1, progressToken "tok") and
// returns its response stream once its headers arrived.
func startCall(t *testing.T, url, sid string) *clientStream {
	t.Helper()
	return startRequest(t, url, sid, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"b_t","arguments":{},"_meta":{"progressToken":"tok"}}}`)
}

// startRequest posts the request body and returns its response stream
// once its headers arrived.
func startRequest(t *testing.T, url, sid, body string) *clientStream {
	t.Helper()
	resp := postNoTimeout(t, url, sid, body)
	cs := &clientStream{resp: resp, json: wire.MediaType(resp.Header.Get("Content-Type")) == wire.MediaJSON}
	if !cs.json {
		cs.er = wire.NewEventReader(resp.Body)
	}
	return cs
}

// next is the stream's next message (io.EOF at its end).
func (cs *clientStream) next() (*wire.Message, error) {
	var data []byte
	var err error
	if cs.json {
		if data, err = io.ReadAll(cs.resp.Body); err == nil && len(data) == 0 {
			err = io.EOF
		}
		cs.json, cs.er = false, wire.NewEventReader(bytes.NewReader(nil))
	} else {
		data, err = cs.er.Next()
	}
	if err != nil {
		return nil, err
	}
	m := new(wire.Message)
	return m, wire.Decode(bytes.Clone(data), m)
}

// postNoTimeout is post without a client timeout: the call's response may
// wait on the test's next step.
func postNoTimeout(t *testing.T, url, id, body string) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	req.Header.Set("Mcp-Session-Id", id)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err, "POST %s", body)
	t.Cleanup(func() { resp.Body.Close() })
	return resp
}

var rbResult = json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)

func rbSSE(w http.ResponseWriter, msgs ...[]byte) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
	}
	for _, m := range msgs {
		_, _ = w.Write(wire.AppendEvent(nil, mcp.Event{Name: "message", Data: m}))
	}
	w.(http.Flusher).Flush()
}

func rbProgress(tok string, n int) []byte {
	return wire.Notification("notifications/progress", fmt.Appendf(nil, `{"progressToken":%q,"progress":%d}`, tok, n))
}
