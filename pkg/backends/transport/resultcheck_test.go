package transport

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// nullAnswer is a misbehaving backend's answer to req (nil for a
// notification): initialize is answered properly, tools/list and
// tools/call with "result": null, prompts/list with neither result nor
// error, resources/list with a number.
func nullAnswer(req *jsonrpc.Request) []byte {
	if !req.IsCall() {
		return nil
	}
	id, _ := json.Marshal(req.ID.Raw())
	result := map[string]string{
		"initialize":     `,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{},"prompts":{},"resources":{}},"serverInfo":{"name":"raw","version":"1"}}`,
		"tools/list":     `,"result":null`,
		"tools/call":     `,"result":null`,
		"prompts/list":   ``,
		"resources/list": `,"result":7`,
	}[req.Method]
	return []byte(`{"jsonrpc":"2.0","id":` + string(id) + result + `}`)
}

// requireResultErrors checks that the go-sdk client cs got, for every
// answer above, -32603 naming the backend "raw" and the method.
func requireResultErrors(t *testing.T, cs *mcp.ClientSession) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	check := func(what string, res any, err error, want string) {
		var we *jsonrpc.Error
		if assert.ErrorAs(t, err, &we, "%s: an empty success (%+v)", what, res) {
			assert.EqualValues(t, jsonrpc.CodeInternalError, we.Code, what)
			assert.Equal(t, `backend "raw" answered `+what+` with `+want, we.Message)
		}
	}
	lt, err := cs.ListTools(ctx, nil)
	check("tools/list", lt, err, "a null result")
	ct, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "x"})
	check("tools/call", ct, err, "a null result")
	lp, err := cs.ListPrompts(ctx, nil)
	check("prompts/list", lp, err, "no result")
	lr, err := cs.ListResources(ctx, nil)
	check("resources/list", lr, err, "a result that is not an object (7)")
	require.NoError(t, cs.Ping(ctx, nil), "a ping's answer is not checked")
}

// TestBackendNullListBecameEmptyInventory pins a streamable HTTP backend
// answering a list or call with "result": null (or none): the go-sdk
// client decoded it into an empty list or result, so a broken backend
// looked like one with no tools. The check on the session's HTTP client
// makes each the JSON-RPC error -32603 naming the backend and the method.
func TestBackendNullListBecameEmptyInventory(t *testing.T) {
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		msg, err := jsonrpc.DecodeMessage(body)
		req, ok := msg.(*jsonrpc.Request)
		if err != nil || !ok || !req.IsCall() {
			w.WriteHeader(http.StatusAccepted)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		if req.Method == "ping" {
			_, _ = io.WriteString(w, `{"jsonrpc":"2.0","id":`+string(must(json.Marshal(req.ID.Raw())))+`,"result":{}}`)
			return
		}
		_, _ = w.Write(nullAnswer(req))
	}))
	defer hs.Close()
	tr := &mcp.StreamableClientTransport{Endpoint: hs.URL, HTTPClient: CheckHTTP(hs.Client(), "raw"), DisableStandaloneSSE: true}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cs.Close()
	requireResultErrors(t, cs)
}

// TestBackendNullResultOnStdioBecameEmptySuccess is the same over a
// transport checked at its connection (stdio, SSE): here the go-sdk's
// in-memory transport with a raw JSON-RPC peer.
func TestBackendNullResultOnStdioBecameEmptySuccess(t *testing.T) {
	ct, st := mcp.NewInMemoryTransports()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	peer, err := st.Connect(ctx)
	require.NoError(t, err)
	defer peer.Close()
	go func() {
		for {
			msg, err := peer.Read(ctx)
			if err != nil {
				return
			}
			req, ok := msg.(*jsonrpc.Request)
			if !ok || !req.IsCall() {
				continue
			}
			ans := nullAnswer(req)
			if req.Method == "ping" {
				ans = []byte(`{"jsonrpc":"2.0","id":` + string(must(json.Marshal(req.ID.Raw()))) + `,"result":{}}`)
			}
			m, _ := jsonrpc.DecodeMessage(ans)
			if peer.Write(ctx, m) != nil {
				return
			}
		}
	}()
	tr := CheckConn(ct, "raw")
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, tr, &mcp.ClientSessionOptions{ProtocolVersion: "2025-11-25"})
	require.NoError(t, err)
	defer cs.Close()
	requireResultErrors(t, cs)
}

func must(b []byte, err error) []byte {
	if err != nil {
		panic(err)
	}
	return b
}
