package modern_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
)

const (
	modernV = "2026-07-28"
	legacyV = "2025-11-25"
)

// startBackend serves a go-sdk server (stateless: Modern-capable; else a
// stateful Legacy one) on httptest, set up by setup, with a completion
// handler that offers "a" and "b".
func startBackend(t testing.TB, name string, stateless bool, setup func(*mcp.Server)) config.Backend {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "test"}, &mcp.ServerOptions{
		CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
			return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"a", "b"}}}, nil
		},
	})
	setup(srv)
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv },
		&mcp.StreamableHTTPOptions{Stateless: stateless})
	hs := httptest.NewServer(h)
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
	})
	return config.Backend{Name: name, URL: hs.URL, Transport: config.TransportStreamableHTTP}
}

// startVMCP runs vmcp.New over bs (defaults applied, then mutate) on
// httptest and returns its MCP endpoint URL.
func startVMCP(t testing.TB, mutate func(*config.Config), bs ...config.Backend) (string, *vmcp.Server) {
	t.Helper()
	cfg := &config.Config{Backends: bs}
	cfg.ApplyDefaults()
	if mutate != nil {
		mutate(cfg)
	}
	srv, err := vmcp.New(cfg, vmcp.Options{StartWait: 10 * time.Second})
	require.NoError(t, err)
	hs := httptest.NewServer(srv.Handler())
	t.Cleanup(func() {
		_ = srv.Close()
		hs.CloseClientConnections()
		hs.Close()
	})
	return hs.URL + cfg.Path, srv
}

// echo adds tool name returning "<backend>/<name>:<text>".
func echo(s *mcp.Server, backend, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
		func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var args struct{ Text string }
			_ = json.Unmarshal(req.Params.Arguments, &args)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: backend + "/" + name + ":" + args.Text}}}, nil
		})
}

// features adds the echo tool, prompt "greet", resource <name>://readme and
// template <name>://item/{id} to s.
func features(name string) func(*mcp.Server) {
	return func(s *mcp.Server) {
		echo(s, name, "echo")
		s.AddPrompt(&mcp.Prompt{Name: "greet", Arguments: []*mcp.PromptArgument{{Name: "who"}}},
			func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
				msg := &mcp.PromptMessage{Role: "user", Content: &mcp.TextContent{Text: name + " greets " + req.Params.Arguments["who"]}}
				return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{msg}}, nil
			})
		read := func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: name + " read " + req.Params.URI}}}, nil
		}
		s.AddResource(&mcp.Resource{URI: name + "://readme", Name: "readme"}, read)
		s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: name + "://item/{id}", Name: "item"}, read)
	}
}

// reply is a JSON-RPC response as the tests read it.
type reply struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result"`
	Error   *jsonrpc.Error  `json:"error"`
}

// post sends a raw POST and returns the response with its body read.
func post(t testing.TB, url string, hdr http.Header, body string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	require.NoError(t, err)
	req.Header = hdr
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp, b
}

// modernHeaders are the headers a 2026-07-28 client sends for method;
// name is Mcp-Name ("" for none).
func modernHeaders(method, name string) http.Header {
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, text/event-stream")
	h.Set("Mcp-Protocol-Version", modernV)
	h.Set("Mcp-Method", method)
	if name != "" {
		h.Set("Mcp-Name", name)
	}
	return h
}

// stdMeta is the _meta a 2026-07-28 client sends.
func stdMeta() map[string]any {
	return map[string]any{
		mcp.MetaKeyProtocolVersion:    modernV,
		mcp.MetaKeyClientCapabilities: map[string]any{},
		mcp.MetaKeyClientInfo:         map[string]any{"name": "raw", "version": "1"},
	}
}

// body builds a JSON-RPC request; id is raw JSON ("" for a notification).
// params gets stdMeta() unless it already has "_meta".
func body(id, method string, params map[string]any) string {
	if params == nil {
		params = map[string]any{}
	}
	if _, ok := params["_meta"]; !ok {
		params["_meta"] = stdMeta()
	}
	p, _ := json.Marshal(params)
	if id == "" {
		return fmt.Sprintf(`{"jsonrpc":"2.0","method":%q,"params":%s}`, method, p)
	}
	return fmt.Sprintf(`{"jsonrpc":"2.0","id":%s,"method":%q,"params":%s}`, id, method, p)
}

// nameOf is the Mcp-Name value of a request's params, "" if none.
func nameOf(method string, params map[string]any) string {
	switch method {
	case "tools/call", "prompts/get":
		s, _ := params["name"].(string)
		return s
	case "resources/read":
		s, _ := params["uri"].(string)
		return s
	}
	return ""
}

// rpc sends a well-formed Modern request and decodes the reply.
func rpc(t testing.TB, url, id, method string, params map[string]any) (int, reply) {
	t.Helper()
	resp, b := post(t, url, modernHeaders(method, nameOf(method, params)), body(id, method, params))
	return resp.StatusCode, decodeReply(t, b)
}

func decodeReply(t testing.TB, b []byte) reply {
	t.Helper()
	var r reply
	require.NoError(t, json.Unmarshal(b, &r), "reply %s", b)
	require.Equal(t, "2.0", r.JSONRPC, "reply %s", b)
	return r
}

// result decodes a successful reply's result into a map.
func result(t testing.TB, status int, r reply) map[string]any {
	t.Helper()
	require.Equal(t, http.StatusOK, status, "error %+v", r.Error)
	require.Nil(t, r.Error)
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.Result, &m))
	return m
}

// requireError checks a reply's HTTP status and JSON-RPC error code.
func requireError(t testing.TB, status int, r reply, wantStatus int, wantCode int64) *jsonrpc.Error {
	t.Helper()
	require.NotNil(t, r.Error, "want error %d, got result %s", wantCode, r.Result)
	require.Equal(t, wantCode, r.Error.Code, "message %q", r.Error.Message)
	require.Equal(t, wantStatus, status, "message %q", r.Error.Message)
	return r.Error
}
