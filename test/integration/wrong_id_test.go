package integration

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// wrongIDBackend is a Legacy go-sdk server (stateful) whose tools/call of
// "json" and "sse" is answered with a response to another id ("wrong-"
// and the request's id): as a JSON body, or as an SSE event on a stream
// then kept open until the test ends. Its timeout is 10 minutes, so a call
// waiting for the right id would end by the client's deadline, never with
// the backend's own error.
func wrongIDBackend(t *testing.T, name string) config.Backend {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "test"}, nil)
	echoTool(srv, name, "echo")
	for _, tool := range []string{"json", "sse"} {
		srv.AddTool(&mcp.Tool{Name: tool, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return textResultOf("answered with the right id"), nil
		})
	}
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	release := make(chan struct{})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		var m wire.Message
		_ = wire.Decode(bytes.Clone(body), &m)
		sse := bytes.Contains(body, []byte(`"name":"sse"`))
		if m.Method != "tools/call" || (!sse && !bytes.Contains(body, []byte(`"name":"json"`))) {
			r.Body = io.NopCloser(bytes.NewReader(body))
			sdk.ServeHTTP(w, r)
			return
		}
		wrong := []byte(`{"jsonrpc":"2.0","id":` + jsonOf("wrong-"+string(m.ID)) + `,"result":{"content":[{"type":"text","text":"misrouted"}]}}`)
		if !sse {
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(wrong)
			return
		}
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = w.Write(append(append([]byte("event: message\ndata: "), wrong...), "\n\n"...))
		w.(http.Flusher).Flush()
		select { // the stream stays open: only the wrong id can end the call
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hs.Close)
	t.Cleanup(func() { close(release) }) // before hs.Close
	return config.Backend{Name: name, URL: hs.URL, Transport: config.TransportStreamableHTTP, Timeout: config.Duration(10 * time.Minute)}
}

// Before a response to another id failed the request at once, a Modern
// client's call to a Legacy HTTP backend answering so (on a pooled go-sdk
// session) waited for the backend timeout and then said "timed out"; a
// Legacy client's relayed call did so when the answer came on an SSE
// stream left open. Both revisions now get -32603 naming the backend and
// the id it answered, and the session serves on.
func TestWrongIDAnswerWaitedForTheBackendTimeout(t *testing.T) {
	t.Parallel()
	v := harness.StartVMCP(t, nil, wrongIDBackend(t, "w"))
	awaitTools(t, v, "w_echo", "w_json", "w_sse")
	for _, version := range []string{legacy, ""} {
		cs := v.Connect(t, version, nil)
		for _, tool := range []string{"w_json", "w_sse"} {
			_, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{}})
			we := rpcError(t, err)
			require.Equal(t, int64(jsonrpc.CodeInternalError), we.Code, "revision %q, %s: %v", version, tool, err)
			require.Contains(t, we.Message, `backend "w" answered tools/call (id `, "revision %q, %s", version, tool)
			require.Contains(t, we.Message, `with a response to id "wrong-`, "revision %q, %s", version, tool)
		}
		require.Equal(t, "w/echo:after", callText(t, cs, "w_echo", "after"), "revision %q: the session serves on", version)
	}
}
