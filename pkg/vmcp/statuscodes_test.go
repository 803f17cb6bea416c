package vmcp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// rpcAnswer is a raw HTTP answer read as a JSON-RPC error response.
type rpcAnswer struct {
	status      int
	contentType string
	header      http.Header
	body        string
	id          json.RawMessage
	code        int64
	message     string
}

// send sends method to url with body and hdr (POST's media headers
// included) and reads the answer whole.
func send(t *testing.T, method, url, body string, hdr map[string]string) rpcAnswer {
	t.Helper()
	req := post(t, url, body, hdr)
	req.Method = method
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	a := rpcAnswer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), header: resp.Header, body: string(b)}
	var m struct {
		ID    json.RawMessage `json:"id"`
		Error *struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if json.Unmarshal(rpcBody(b), &m) == nil && m.Error != nil {
		a.id, a.code, a.message = m.ID, m.Error.Code, m.Error.Message
	}
	return a
}

// rpcBody is the JSON-RPC message of an answer: the body, or an SSE
// answer's last message event's data.
func rpcBody(b []byte) []byte {
	msg := b
	for line := range bytes.Lines(b) {
		if data, ok := bytes.CutPrefix(line, []byte("data: {")); ok {
			msg = append([]byte("{"), bytes.TrimSpace(data)...)
		}
	}
	return msg
}

// requireRPCError checks a 400 with a JSON-RPC error body of code for id.
func requireRPCError(t *testing.T, a rpcAnswer, code int64, id string, what string) {
	t.Helper()
	require.Equal(t, http.StatusBadRequest, a.status, "%s: %s", what, a.body)
	require.Equal(t, "application/json", a.contentType, "%s: %s", what, a.body)
	require.Equal(t, code, a.code, "%s: %s", what, a.body)
	require.JSONEq(t, id, string(a.id), "%s: %s", what, a.body)
}

func echoVMCP(t *testing.T) *served {
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	return serveVMCP(t, nil, vmcp.Options{}, b.Config())
}

// A Legacy tools/list without Mcp-Session-Id got HTTP 200 with an SSE body
// carrying JSON-RPC error code 0 (the go-sdk handler opened a session for
// it): now 400 + -32600 as a JSON body, and no session is created.
func TestLegacyRequestWithoutSessionGot200WithErrorCode0(t *testing.T) {
	v := echoVMCP(t)
	sessions := v.Srv.SessionCount()
	for _, version := range []string{"2025-11-25", ""} {
		a := send(t, http.MethodPost, v.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"Mcp-Protocol-Version": version})
		requireRPCError(t, a, -32600, "1", "tools/list at "+version)
		assert.Contains(t, a.message, "Mcp-Session-Id")
		a = send(t, http.MethodPost, v.URL, `{"jsonrpc":"2.0","method":"notifications/initialized"}`, nil)
		requireRPCError(t, a, -32600, "null", "a notification without a session")
	}
	a := send(t, http.MethodGet, v.URL, "", map[string]string{"Accept": "text/event-stream"})
	requireRPCError(t, a, -32600, "null", "GET without a session")
	assert.Equal(t, sessions, v.Srv.SessionCount(), "no session was created")
	legacySession(t, v.URL) // initialize still starts one
}

// {"jsonrpc":"2.0","id":1} (neither a request nor a response) got 202:
// now 400 + -32600, with and without a session.
func TestMessageWithoutMethodGot202(t *testing.T) {
	v := echoVMCP(t)
	sid := legacySession(t, v.URL)
	for _, hdr := range []map[string]string{nil, {"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}} {
		a := send(t, http.MethodPost, v.URL, `{"jsonrpc":"2.0","id":1}`, hdr)
		requireRPCError(t, a, -32600, "1", "no method")
		assert.Contains(t, a.message, `"method"`)
	}
	a := send(t, http.MethodPost, v.URL, `{"jsonrpc":"1.0","id":2,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	requireRPCError(t, a, -32600, "2", "jsonrpc 1.0")
	a = send(t, http.MethodPost, v.URL, `{"jsonrpc":"2.0","id":3,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	require.Equal(t, http.StatusOK, a.status, "a valid request is served as before: %s", a.body)
}

// A Legacy parse error was answered text/plain: now 400 + -32700 with a
// null id, as JSON, with and without a session.
func TestLegacyParseErrorWasTextPlain(t *testing.T) {
	v := echoVMCP(t)
	sid := legacySession(t, v.URL)
	for _, hdr := range []map[string]string{nil, {"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}} {
		for _, body := range []string{`{"jsonrpc":`, `not json`} {
			requireRPCError(t, send(t, http.MethodPost, v.URL, body, hdr), -32700, "null", body)
		}
	}
}

// MCP-Protocol-Version: not-a-version was routed to Modern and got
// "missing required Mcp-Method header"; a Legacy session request with an
// unsupported version got a text/plain answer not naming it. Now every
// malformed or unknown version gets 400 with -32022 naming it (and the
// supported ones), on every method.
func TestUnknownProtocolVersionGotAMessageNotNamingIt(t *testing.T) {
	v := echoVMCP(t)
	sid := legacySession(t, v.URL)
	cases := []struct {
		method, version, body, id string
		session                   bool
	}{
		{http.MethodPost, "not-a-version", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, "1", false},
		{http.MethodPost, "2027-01-01", `{"jsonrpc":"2.0","id":"x","method":"tools/list"}`, `"x"`, false},
		{http.MethodPost, "2025-01-01", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, "2", true},
		{http.MethodGet, "2025-01-01", ``, "null", true},
		{http.MethodDelete, "not-a-version", ``, "null", true},
	}
	for _, c := range cases {
		hdr := map[string]string{"Mcp-Protocol-Version": c.version, "Mcp-Method": "tools/list"}
		if c.session {
			hdr["Mcp-Session-Id"] = sid
		}
		a := send(t, c.method, v.URL, c.body, hdr)
		requireRPCError(t, a, mcp.CodeUnsupportedProtocolVersion, c.id, c.method+" "+c.version)
		assert.Contains(t, a.message, `"`+c.version+`"`, "the message names the version")
		assert.Contains(t, a.message, "2025-11-25", "and the supported ones")
	}
	a := send(t, http.MethodPost, v.URL, `{"jsonrpc":"2.0","id":3,"method":"tools/list"}`, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	require.Equal(t, http.StatusOK, a.status, "the session survived: %s", a.body)
}

// The -32020 error echoed a 500 KB Mcp-Name header in full: messages now
// quote at most the first 256 bytes of a header or a name (Modern header
// mismatch, Legacy and Modern unknown tool).
func TestHugeMcpNameWasEchoedInFull(t *testing.T) {
	v := echoVMCP(t)
	huge := strings.Repeat("n", 500<<10)
	quoted := `"` + strings.Repeat("n", 256) + `"`
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	a := send(t, http.MethodPost, v.URL, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"alpha_echo",`+meta+`}}`,
		map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": huge})
	requireRPCError(t, a, mcp.CodeHeaderMismatch, "1", "Mcp-Name mismatch")
	assert.Contains(t, a.message, quoted)
	assert.Less(t, len(a.body), 2048, "the header is not echoed in full")

	sid := legacySession(t, v.URL)
	for meta, hdr := range map[string]map[string]string{
		`"arguments":{}`: {"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"},
		meta:             {"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call", "Mcp-Name": "x" + huge},
	} {
		a := send(t, http.MethodPost, v.URL, `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"x`+huge+`",`+meta+`}}`, hdr)
		require.Contains(t, a.body, "unknown tool", a.body[:min(len(a.body), 512)]) // Legacy: in an SSE event
		assert.Contains(t, a.body, `\"x`+strings.Repeat("n", 255)+`\"`)
		assert.Less(t, len(a.body), 2048, "the name is not echoed in full")
	}
	for meta, hdr := range map[string]map[string]string{ // an unknown method: the go-sdk's refusal (Legacy), vmcp's (Modern)
		`"x":1`: {"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"},
		meta:    {"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "x" + huge},
	} {
		a := send(t, http.MethodPost, v.URL, `{"jsonrpc":"2.0","id":3,"method":"x`+huge+`","params":{`+meta+`}}`, hdr)
		require.GreaterOrEqual(t, a.status, 400, a.body[:min(len(a.body), 512)])
		require.Contains(t, a.message, "xnnnn", a.body[:min(len(a.body), 512)])
		assert.Less(t, len(a.message), wire.MaxQuoted+64, "the method is not echoed in full: %s", a.message)
	}
}

// The go-sdk handler's SSE responses (a Legacy ping's POST stream, the
// standalone GET stream) lacked X-Accel-Buffering: no, which nginx-style
// proxies need to stop buffering; every SSE response now carries it and
// Cache-Control: no-cache (a Modern listen's too).
func TestSDKSSEResponsesLackedXAccelBuffering(t *testing.T) {
	v := echoVMCP(t)
	sid := legacySession(t, v.URL)
	ping := post(t, v.URL, `{"jsonrpc":"2.0","id":5,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	get, err := http.NewRequest(http.MethodGet, v.URL, nil)
	require.NoError(t, err)
	get.Header.Set("Accept", "text/event-stream")
	get.Header.Set("Mcp-Session-Id", sid)
	get.Header.Set("Mcp-Protocol-Version", "2025-11-25")
	listen := post(t, v.URL, modernListen(7), map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "subscriptions/listen"})
	for name, req := range map[string]*http.Request{"ping": ping, "GET": get, "listen": listen} {
		s := openSSE(t, req)
		assert.Equal(t, "no", s.resp.Header.Get("X-Accel-Buffering"), name)
		assert.Contains(t, s.resp.Header.Get("Cache-Control"), "no-cache", name)
	}
}

// The go-sdk handler's own refusals (an unknown session, a bad Accept, a
// batch at 2025-11-25, a wrong Content-Type) and the edge's (a foreign
// Host) were text/plain: they keep their status and are JSON-RPC bodies.
func TestSDKAndEdgeRefusalsWereTextPlain(t *testing.T) {
	v := echoVMCP(t)
	sid := legacySession(t, v.URL)
	session := map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"}
	cases := []struct {
		name   string
		status int
		body   string
		hdr    map[string]string
		method string
	}{
		{"unknown session", http.StatusNotFound, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Mcp-Session-Id": "nope"}, http.MethodPost},
		{"Accept", http.StatusBadRequest, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid, "Accept": "application/json"}, http.MethodPost},
		{"batch", http.StatusBadRequest, `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, session, http.MethodPost},
		{"Content-Type", http.StatusUnsupportedMediaType, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, map[string]string{"Mcp-Session-Id": sid, "Content-Type": "text/plain"}, http.MethodPost},
		{"unknown session GET", http.StatusNotFound, ``, map[string]string{"Mcp-Session-Id": "nope", "Accept": "text/event-stream"}, http.MethodGet},
	}
	for _, c := range cases {
		a := send(t, c.method, v.URL, c.body, c.hdr)
		require.Equal(t, c.status, a.status, "%s: %s", c.name, a.body)
		require.Equal(t, "application/json", a.contentType, "%s: %s", c.name, a.body)
		require.Equal(t, int64(-32600), a.code, "%s: %s", c.name, a.body)
		require.JSONEq(t, "null", string(a.id), c.name)
		require.NotEmpty(t, a.message, c.name)
	}
	resp, err := (&http.Client{Transport: hostTransport{publicHost}}).Do(post(t, v.URL, `{"jsonrpc":"2.0","id":1,"method":"ping"}`, session))
	require.NoError(t, err)
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	require.Contains(t, string(body), `"code":-32600`)
	require.Contains(t, string(body), publicHost, "the message names the Host")
}

// A second initialize on a Legacy session got JSON-RPC error code 0 (the
// go-sdk refuses it with a plain error): now -32600, naming the duplicate.
func TestSecondInitializeGotErrorCode0(t *testing.T) {
	v := echoVMCP(t)
	sid := legacySession(t, v.URL)
	a := send(t, http.MethodPost, v.URL, `{"jsonrpc":"2.0","id":7,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"again","version":"1"}}}`,
		map[string]string{"Mcp-Session-Id": sid, "Mcp-Protocol-Version": "2025-11-25"})
	assert.EqualValues(t, -32600, a.code, a.body)
	assert.Contains(t, a.message, "initialize")
	assert.JSONEq(t, "7", string(a.id))
}

// A Legacy request of a method no server offers got -32600 with id null
// (the go-sdk handler refuses it as a plain-text 400): now -32601 (Method
// not found, as the Modern path answers), for its id, naming the method. A
// notification method sent with an id is still an invalid request.
func TestLegacyUnknownMethodGotInvalidRequest(t *testing.T) {
	v := echoVMCP(t)
	session := map[string]string{"Mcp-Session-Id": legacySession(t, v.URL), "Mcp-Protocol-Version": "2025-11-25"}
	a := send(t, http.MethodPost, v.URL, `{"jsonrpc":"2.0","id":9,"method":"foo/bar"}`, session)
	requireRPCError(t, a, -32601, "9", "an unknown method")
	assert.Contains(t, a.message, `"foo/bar"`, "the message names the method")
	a = send(t, http.MethodPost, v.URL, `{"jsonrpc":"2.0","id":"x","method":"notifications/initialized"}`, session)
	requireRPCError(t, a, -32600, "null", "a notification with an id")
	a = send(t, http.MethodPost, v.URL, `{"jsonrpc":"2.0","id":10,"method":"ping"}`, session)
	require.Equal(t, http.StatusOK, a.status, "a known method is served: %s", a.body)
}
