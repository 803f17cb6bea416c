package integration

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

const listBody = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}`

// A request naming a session vmcp never issued gets 404, so the client
// knows to start a new session.
func TestUnknownSessionIDIs404(t *testing.T) {
	v := harness.StartVMCP(t, nil, backendWith(t, "alpha", "echo").Config())
	code, body := post(t, v, map[string]string{"Mcp-Session-Id": "made-up-session-id"}, []byte(listBody))
	require.Equal(t, http.StatusNotFound, code, body)
}

// Malformed JSON is refused with 400, with or without a session; it
// creates no client session and does not break an existing one.
func TestMalformedJSONIs400AndLeavesSessionUsable(t *testing.T) {
	v := harness.StartVMCP(t, nil, backendWith(t, "alpha", "echo").Config())
	code, body := post(t, v, nil, []byte(`{"jsonrpc":"2.0","id":1,"method":`))
	require.Equal(t, http.StatusBadRequest, code, body)
	require.Equal(t, 0, v.Server.SessionCount())

	cs := v.Connect(t, legacy, nil)
	for _, garbage := range []string{`{"jsonrpc":"2.0","id":1,"method":`, `not json`} {
		code, body = post(t, v, map[string]string{"Mcp-Session-Id": cs.ID()}, []byte(garbage))
		require.Equal(t, http.StatusBadRequest, code, body)
	}
	require.Equal(t, "alpha/echo:ok", callText(t, cs, "alpha_echo", "ok"))
	require.Equal(t, 1, v.Server.SessionCount())
}

func TestWrongContentTypeIs415(t *testing.T) {
	v := harness.StartVMCP(t, nil, backendWith(t, "alpha", "echo").Config())
	cs := v.Connect(t, legacy, nil)
	for _, sid := range []string{"", cs.ID()} {
		code, body := post(t, v, map[string]string{"Content-Type": "text/plain", "Mcp-Session-Id": sid}, []byte(listBody))
		require.Equal(t, http.StatusUnsupportedMediaType, code, body)
	}
}

// A body over http.max_body_bytes gets 413, before and within a session,
// and the session stays usable.
func TestBodyOverMaxBodyBytesIs413(t *testing.T) {
	v := harness.StartVMCP(t, func(c *config.Config) { c.HTTP.MaxBodyBytes = 4096 }, backendWith(t, "alpha", "echo").Config())
	big := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},` +
		`"clientInfo":{"name":"` + strings.Repeat("x", 8192) + `","version":"1"}}}`
	code, body := post(t, v, nil, []byte(big))
	require.Equal(t, http.StatusRequestEntityTooLarge, code, body)

	cs := v.Connect(t, legacy, nil)
	call := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"alpha_echo","arguments":{"text":"` + strings.Repeat("x", 8192) + `"}}}`
	code, body = post(t, v, map[string]string{"Mcp-Session-Id": cs.ID()}, []byte(call))
	require.Equal(t, http.StatusRequestEntityTooLarge, code, body)
	require.Equal(t, "alpha/echo:small", callText(t, cs, "alpha_echo", "small"))
}

func TestUnknownToolIsInvalidParamsNamingIt(t *testing.T) {
	v := harness.StartVMCP(t, nil, backendWith(t, "alpha", "echo").Config())
	cs := v.Connect(t, legacy, nil)
	res, err := call(t, cs, "no_such_tool", "")
	require.Nil(t, res)
	we := rpcError(t, err)
	require.Equal(t, int64(jsonrpc.CodeInvalidParams), we.Code)
	require.Contains(t, we.Message, `"no_such_tool"`)
}

// A backend tool handler's error reaches the client as a JSON-RPC error
// naming the backend, and the client session keeps working.
func TestBackendToolErrorIsJSONRPCErrorNamingBackend(t *testing.T) {
	be := harness.StartBackend(t, "flaky", harness.Stateful, func(s *mcp.Server) {
		harness.AddEcho(s, "echo")
		s.AddTool(&mcp.Tool{Name: "fail", InputSchema: map[string]any{"type": "object"}},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return nil, errors.New("disk on fire")
			})
	})
	v := harness.StartVMCP(t, nil, be.Config())
	cs := v.Connect(t, legacy, nil)

	res, err := call(t, cs, "flaky_fail", "")
	require.Nil(t, res)
	we := rpcError(t, err)
	require.Contains(t, we.Message, `backend "flaky"`)
	require.Contains(t, we.Message, "disk on fire")
	require.Equal(t, "echo:after", callText(t, cs, "flaky_echo", "after"))
}

// A backend answering a call with a body that is not JSON gives the client
// a JSON-RPC error naming the backend (not a hang, not an empty success),
// and the next call on the same client session works.
func TestBackendGarbageResponseIsErrorNamingBackendAndSessionSurvives(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "junk", Version: "test"}, nil)
	harness.AddEcho(s, "echo")
	harness.AddEcho(s, "garbage")
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost {
			b, err := io.ReadAll(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			if bytes.Contains(b, []byte(`"name":"garbage"`)) {
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write([]byte("not json"))
				return
			}
			r.Body = io.NopCloser(bytes.NewReader(b))
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close) // runs after vmcp's cleanup has closed its sessions
	v := harness.StartVMCP(t, nil, config.Backend{Name: "junk", URL: hs.URL, Transport: config.TransportStreamableHTTP})
	cs := v.Connect(t, legacy, nil)

	require.Equal(t, "echo:before", callText(t, cs, "junk_echo", "before"))
	res, err := call(t, cs, "junk_garbage", "x")
	require.Nil(t, res)
	we := rpcError(t, err)
	require.Contains(t, we.Message, `backend "junk"`)
	require.Equal(t, "echo:after", callText(t, cs, "junk_echo", "after"))
}
