// Package integration runs vmcp end to end with in-process backends (see
// the harness package). Every test runs with -race and synchronises on
// events; require.Eventually is used only to wait for backend state.
package integration

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// legacy is the Legacy revision the tests pin.
const legacy = "2025-11-25"

// stateWait bounds waits for backend state changes seen by vmcp.
const stateWait = 20 * time.Second

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// call calls tool name with {"text": text}.
func call(t *testing.T, cs *mcp.ClientSession, name, text string) (*mcp.CallToolResult, error) {
	t.Helper()
	return cs.CallTool(ctx(t), &mcp.CallToolParams{Name: name, Arguments: map[string]any{"text": text}})
}

// callText calls tool name and returns its text, failing on any error.
func callText(t *testing.T, cs *mcp.ClientSession, name, text string) string {
	t.Helper()
	res, err := call(t, cs, name, text)
	require.NoError(t, err, "calling %s", name)
	require.False(t, res.IsError, "calling %s: tool error %+v", name, res.Content)
	return harness.Text(t, res)
}

// rpcError returns the JSON-RPC error inside err, failing if there is none.
func rpcError(t *testing.T, err error) *jsonrpc.Error {
	t.Helper()
	require.Error(t, err)
	var we *jsonrpc.Error
	require.True(t, errors.As(err, &we), "want a JSON-RPC error, got %T: %v", err, err)
	return we
}

// echoTool adds tool name to s; its result names the backend: "<backend>/<name>:<text>".
func echoTool(s *mcp.Server, backend, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: backend + "/" + name + ":" + args.Text}}}, nil
		})
}

// backendWith starts a stateful backend named name whose tools (echoTool)
// name the backend.
func backendWith(t *testing.T, name string, tools ...string) *harness.Backend {
	return harness.StartBackend(t, name, harness.Stateful, func(s *mcp.Server) {
		for _, tool := range tools {
			echoTool(s, name, tool)
		}
	})
}

type readyzBody struct {
	Ready    bool `json:"ready"`
	Backends []struct {
		Name  string `json:"name"`
		State string `json:"state"`
		Error string `json:"error"`
	} `json:"backends"`
}

// readyz fetches vmcp's /readyz. It does not fail the test, so it can run
// inside require.Eventually; errors show as status 0.
func readyz(t *testing.T, v *harness.VMCP) (int, readyzBody) {
	var body readyzBody
	resp, err := http.Get(v.Base + "/readyz")
	if err != nil {
		t.Logf("GET /readyz: %v", err)
		return 0, body
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Logf("GET /readyz: decoding: %v", err)
		return 0, body
	}
	return resp.StatusCode, body
}

// backendState is the state /readyz reports for backend name ("" if absent).
func backendState(t *testing.T, v *harness.VMCP, name string) string {
	_, body := readyz(t, v)
	for _, b := range body.Backends {
		if b.Name == name {
			return b.State
		}
	}
	return ""
}

// post sends one raw POST to vmcp's endpoint with the headers a Legacy
// client sends, overridden by hdr, and returns the status and body.
func post(t *testing.T, v *harness.VMCP, hdr map[string]string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx(t), http.MethodPost, v.URL, bytes.NewReader(body))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", legacy)
	for k, val := range hdr {
		req.Header.Set(k, val)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, string(b)
}

// logBuffer is a goroutine-safe log sink.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
