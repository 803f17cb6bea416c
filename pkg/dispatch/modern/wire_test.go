package modern_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
)

// twoBackends runs vmcp over a Legacy (stateful) backend "alpha" and a
// Modern (stateless) backend "beta", each with features(name).
func twoBackends(t *testing.T, mutate func(*config.Config)) string {
	t.Helper()
	url, _ := startVMCP(t, mutate,
		startBackend(t, "alpha", false, features("alpha")),
		startBackend(t, "beta", true, features("beta")))
	return url
}

// Every method answers with resultType "complete" and vmcp's serverInfo
// in _meta, whichever era the backend speaks.
func TestEveryResultHasResultTypeAndServerInfo(t *testing.T) {
	url := twoBackends(t, func(c *config.Config) { c.Instructions = "use me" })
	calls := []struct {
		method string
		params map[string]any
		check  func(t *testing.T, res map[string]any)
	}{
		{"server/discover", nil, func(t *testing.T, res map[string]any) {
			assert.Equal(t, "use me", res["instructions"])
			assert.Contains(t, res["supportedVersions"], modernV)
			assert.Contains(t, res["supportedVersions"], legacyV)
			caps := res["capabilities"].(map[string]any)
			assert.Equal(t, map[string]any{"listChanged": true}, caps["tools"], "list changes are delivered on subscriptions/listen")
			assert.Contains(t, caps, "prompts")
			assert.Contains(t, caps, "completions")
		}},
		{"tools/list", nil, func(t *testing.T, res map[string]any) { assert.Len(t, res["tools"], 2) }},
		{"resources/list", nil, func(t *testing.T, res map[string]any) { assert.Len(t, res["resources"], 2) }},
		{"resources/templates/list", nil, func(t *testing.T, res map[string]any) { assert.Len(t, res["resourceTemplates"], 2) }},
		{"prompts/list", nil, func(t *testing.T, res map[string]any) { assert.Len(t, res["prompts"], 2) }},
		{"tools/call", map[string]any{"name": "alpha_echo", "arguments": map[string]any{"text": "x"}}, textIs("alpha/echo:x")},
		{"tools/call", map[string]any{"name": "beta_echo", "arguments": map[string]any{"text": "y"}}, textIs("beta/echo:y")},
		{"prompts/get", map[string]any{"name": "alpha_greet", "arguments": map[string]any{"who": "bo"}}, nil},
		{"prompts/get", map[string]any{"name": "beta_greet", "arguments": map[string]any{"who": "bo"}}, nil},
		{"resources/read", map[string]any{"uri": "alpha://readme"}, contentsIs("alpha read alpha://readme")},
		{"resources/read", map[string]any{"uri": "beta://item/7"}, contentsIs("beta read beta://item/7")},
		{"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "beta_greet"},
			"argument": map[string]any{"name": "who", "value": ""}}, nil},
	}
	for _, c := range calls {
		t.Run(c.method+nameOf(c.method, c.params), func(t *testing.T) {
			st, r := rpc(t, url, `1`, c.method, c.params)
			res := result(t, st, r)
			assert.Equal(t, "complete", res["resultType"])
			meta, _ := res["_meta"].(map[string]any)
			assert.Equal(t, map[string]any{"name": "vmcp", "version": "0.1.0-dev"}, meta[mcp.MetaKeyServerInfo])
			if c.check != nil {
				c.check(t, res)
			}
		})
	}
}

func textIs(want string) func(*testing.T, map[string]any) {
	return func(t *testing.T, res map[string]any) {
		content := res["content"].([]any)
		assert.Equal(t, want, content[0].(map[string]any)["text"])
	}
}

func contentsIs(want string) func(*testing.T, map[string]any) {
	return func(t *testing.T, res map[string]any) {
		contents := res["contents"].([]any)
		assert.Equal(t, want, contents[0].(map[string]any)["text"])
		assert.Equal(t, "public", res["cacheScope"])
	}
}

// String and number ids come back byte for byte, on results and errors.
func TestIDsEchoedRaw(t *testing.T) {
	url := twoBackends(t, nil)
	for _, id := range []string{`"abc"`, `"with \"escapes\" \u00e9"`, `7`, `0`, `-3`, `1.50`, `12345678901234567890`} {
		resp, b := post(t, url, modernHeaders("tools/list", ""), body(id, "tools/list", nil))
		require.Equal(t, http.StatusOK, resp.StatusCode)
		assert.Equal(t, id, string(decodeReply(t, b).ID))

		resp, b = post(t, url, modernHeaders("nope", ""), body(id, "nope", nil))
		require.Equal(t, http.StatusNotFound, resp.StatusCode)
		assert.Equal(t, id, string(decodeReply(t, b).ID))
	}
}

// noParams marks a case sent without a params member.
var noParams = map[string]any{"noParams": true}

// Header and _meta faults, removed and unknown methods, with their HTTP
// status and JSON-RPC code.
func TestRejections(t *testing.T) {
	url := twoBackends(t, nil)
	callParams := func() map[string]any { return map[string]any{"name": "alpha_echo", "arguments": map[string]any{}} }
	withMeta := func(drop string, set map[string]any) map[string]any {
		m := stdMeta()
		delete(m, drop)
		for k, v := range set {
			m[k] = v
		}
		return map[string]any{"_meta": m}
	}
	type wireCase struct {
		name   string
		method string
		params map[string]any
		hdr    func(http.Header)
		status int
		code   int64
		msg    string
	}
	cases := []wireCase{
		{"Mcp-Method missing", "tools/list", nil, func(h http.Header) { h.Del("Mcp-Method") }, 400, mcp.CodeHeaderMismatch, "Mcp-Method"},
		{"Mcp-Method differs", "tools/list", nil, func(h http.Header) { h.Set("Mcp-Method", "prompts/list") }, 400, mcp.CodeHeaderMismatch, "Mcp-Method"},
		{"Mcp-Name missing", "tools/call", callParams(), func(h http.Header) { h.Del("Mcp-Name") }, 400, mcp.CodeHeaderMismatch, "Mcp-Name"},
		{"Mcp-Name differs", "tools/call", callParams(), func(h http.Header) { h.Set("Mcp-Name", "beta_echo") }, 400, mcp.CodeHeaderMismatch, "Mcp-Name"},
		{"Mcp-Name bad base64", "tools/call", callParams(), func(h http.Header) { h.Set("Mcp-Name", "=?base64?!!!?=") }, 400, mcp.CodeHeaderMismatch, "Mcp-Name"},
		{"resources/read Mcp-Name differs", "resources/read", map[string]any{"uri": "alpha://readme"}, func(h http.Header) { h.Set("Mcp-Name", "alpha://other") }, 400, mcp.CodeHeaderMismatch, "Mcp-Name"},
		{"header version unlike _meta", "tools/list", withMeta("", map[string]any{mcp.MetaKeyProtocolVersion: "2026-12-31"}), nil, 400, mcp.CodeHeaderMismatch, "does not match"},
		{"_meta protocolVersion missing", "tools/list", withMeta(mcp.MetaKeyProtocolVersion, nil), nil, 400, jsonrpc.CodeInvalidParams, mcp.MetaKeyProtocolVersion},
		{"_meta clientCapabilities missing", "tools/list", withMeta(mcp.MetaKeyClientCapabilities, nil), nil, 400, jsonrpc.CodeInvalidParams, mcp.MetaKeyClientCapabilities},
		{"_meta clientCapabilities not an object", "tools/call", func() map[string]any {
			p := callParams()
			p["_meta"] = withMeta("", map[string]any{mcp.MetaKeyClientCapabilities: "all"})["_meta"]
			return p
		}(), nil, 400, jsonrpc.CodeInvalidParams, mcp.MetaKeyClientCapabilities},
		{"no params at all", "tools/list", noParams, nil, 400, jsonrpc.CodeInvalidParams, mcp.MetaKeyProtocolVersion},
		// Regression: a nonsense logLevel and an object progressToken were accepted silently.
		{"_meta logLevel not a level", "tools/list", withMeta("", map[string]any{mcp.MetaKeyLogLevel: "nonsense"}), nil, 400, jsonrpc.CodeInvalidParams, mcp.MetaKeyLogLevel},
		{"_meta progressToken an object", "tools/list", withMeta("", map[string]any{"progressToken": map[string]any{"obj": 1}}), nil, 400, jsonrpc.CodeInvalidParams, "progressToken"},
		{"unknown method", "tools/frobnicate", nil, nil, 404, jsonrpc.CodeMethodNotFound, "tools/frobnicate"},
		{"unknown tool", "tools/call", map[string]any{"name": "nope", "arguments": map[string]any{}}, nil, 400, jsonrpc.CodeInvalidParams, `"nope"`},
		{"unknown prompt", "prompts/get", map[string]any{"name": "nope"}, nil, 400, jsonrpc.CodeInvalidParams, `"nope"`},
		{"unknown resource", "resources/read", map[string]any{"uri": "zzz://none"}, nil, 400, jsonrpc.CodeInvalidParams, "not found"},
		{"listen without notifications", "subscriptions/listen", nil, nil, 400, jsonrpc.CodeInvalidParams, "notifications"},
	}
	for _, m := range []string{"ping", "initialize", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"} {
		cases = append(cases, wireCase{"removed " + m, m, nil, nil, 404, jsonrpc.CodeMethodNotFound, m})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := modernHeaders(c.method, nameOf(c.method, c.params))
			if c.hdr != nil {
				c.hdr(h)
			}
			b := `{"jsonrpc":"2.0","id":"r1","method":"` + c.method + `"}`
			if c.params == nil || c.params["noParams"] != true {
				b = body(`"r1"`, c.method, c.params)
			}
			resp, out := post(t, url, h, b)
			r := decodeReply(t, out)
			jerr := requireError(t, resp.StatusCode, r, c.status, c.code)
			assert.Contains(t, jerr.Message, c.msg)
			assert.Equal(t, `"r1"`, string(r.ID))
		})
	}
}

// An unsupported (future) version is -32022 listing what vmcp supports.
func TestUnsupportedVersion(t *testing.T) {
	url := twoBackends(t, nil)
	h := modernHeaders("server/discover", "")
	h.Set("Mcp-Protocol-Version", "2099-01-01")
	meta := stdMeta()
	meta[mcp.MetaKeyProtocolVersion] = "2099-01-01"
	resp, b := post(t, url, h, body(`5`, "server/discover", map[string]any{"_meta": meta}))
	r := decodeReply(t, b)
	jerr := requireError(t, resp.StatusCode, r, 400, mcp.CodeUnsupportedProtocolVersion)
	var data mcp.UnsupportedProtocolVersionData
	require.NoError(t, json.Unmarshal(jerr.Data, &data))
	assert.Equal(t, "2099-01-01", data.Requested)
	assert.Equal(t, mcp.SupportedProtocolVersions(), data.Supported)
	assert.Equal(t, `5`, string(r.ID))
}

// Mcp-Name may be sent =?base64?…?= encoded.
func TestBase64McpName(t *testing.T) {
	url := twoBackends(t, nil)
	h := modernHeaders("tools/call", "")
	h.Set("Mcp-Name", "=?base64?"+base64.StdEncoding.EncodeToString([]byte("beta_echo"))+"?=")
	resp, b := post(t, url, h, body(`1`, "tools/call", map[string]any{"name": "beta_echo", "arguments": map[string]any{"text": "b64"}}))
	res := result(t, resp.StatusCode, decodeReply(t, b))
	textIs("beta/echo:b64")(t, res)
}

// A Modern body without a Modern MCP-Protocol-Version header is refused
// with -32020 instead of reaching the Legacy handler.
func TestModernBodyWithoutModernHeader(t *testing.T) {
	url := twoBackends(t, nil)
	for _, v := range []string{"", legacyV} {
		h := modernHeaders("tools/list", "")
		h.Del("Mcp-Protocol-Version")
		if v != "" {
			h.Set("Mcp-Protocol-Version", v)
		}
		resp, b := post(t, url, h, body(`"x9"`, "tools/list", nil))
		r := decodeReply(t, b)
		requireError(t, resp.StatusCode, r, 400, mcp.CodeHeaderMismatch)
		assert.Equal(t, `"x9"`, string(r.ID))
	}
}

// Transport-level rejections: batch, media type, body size, notifications.
func TestTransportRejections(t *testing.T) {
	url := twoBackends(t, func(c *config.Config) { c.HTTP.MaxBodyBytes = 4096 })

	resp, b := post(t, url, modernHeaders("tools/list", ""), "["+body(`1`, "tools/list", nil)+"]")
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.EqualValues(t, jsonrpc.CodeInvalidRequest, decodeReply(t, b).Error.Code)

	h := modernHeaders("tools/list", "")
	h.Set("Content-Type", "text/plain")
	resp, _ = post(t, url, h, body(`1`, "tools/list", nil))
	assert.Equal(t, http.StatusUnsupportedMediaType, resp.StatusCode)

	resp, _ = post(t, url, modernHeaders("tools/list", ""), body(`1`, "tools/list", map[string]any{"pad": strings.Repeat("x", 5000)}))
	assert.Equal(t, http.StatusRequestEntityTooLarge, resp.StatusCode)

	resp, b = post(t, url, modernHeaders("tools/list", ""), `{"jsonrpc":"2.0","id":1,"method":`)
	assert.Equal(t, http.StatusBadRequest, resp.StatusCode)
	assert.EqualValues(t, jsonrpc.CodeParseError, decodeReply(t, b).Error.Code)

	resp, b = post(t, url, modernHeaders("notifications/cancelled", ""), body("", "notifications/cancelled", map[string]any{"requestId": 1}))
	assert.Equal(t, http.StatusAccepted, resp.StatusCode)
	assert.Empty(t, b)

	resp, b = post(t, url, modernHeaders("notifications/initialized", ""), body("", "notifications/initialized", nil))
	assert.Equal(t, http.StatusNotFound, resp.StatusCode)
	r := decodeReply(t, b)
	assert.EqualValues(t, jsonrpc.CodeMethodNotFound, r.Error.Code)
	assert.Nil(t, r.ID, "a notification's error has no id")
}

// A Modern backend sees exactly the capabilities the client declared (not
// the SDK client's own); a Legacy backend sees no reserved _meta keys.
func TestClientCapabilitiesForwarded(t *testing.T) {
	seen := make(chan *mcp.CallToolRequest, 2)
	spy := func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "spy", InputSchema: map[string]any{"type": "object"}},
			func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				seen <- req
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "ok"}}}, nil
			})
	}
	url, _ := startVMCP(t, nil, startBackend(t, "old", false, spy), startBackend(t, "new", true, spy))
	meta := stdMeta()
	meta[mcp.MetaKeyClientCapabilities] = map[string]any{"sampling": map[string]any{}}
	meta["com.example/trace"] = "t1"

	st, r := rpc(t, url, `1`, "tools/call", map[string]any{"name": "new_spy", "_meta": meta})
	result(t, st, r)
	req := <-seen
	caps := req.ClientCapabilities()
	require.NotNil(t, caps)
	assert.NotNil(t, caps.Sampling, "the client's sampling capability reaches the backend")
	assert.Nil(t, caps.Elicitation)
	assert.Nil(t, caps.RootsV2)
	assert.Equal(t, modernV, req.Params.Meta[mcp.MetaKeyProtocolVersion])
	assert.Equal(t, "t1", req.Params.Meta["com.example/trace"])

	st, r = rpc(t, url, `2`, "tools/call", map[string]any{"name": "old_spy", "_meta": meta})
	result(t, st, r)
	req = <-seen
	for k := range req.Params.Meta {
		assert.False(t, strings.HasPrefix(k, "io.modelcontextprotocol/"), "reserved key %q reached a Legacy backend", k)
	}
	assert.Equal(t, "t1", req.Params.Meta["com.example/trace"])
}

// Arguments annotated with x-mcp-header must be mirrored in Mcp-Param-*
// headers (2026-07-28 Streamable HTTP), as the SDK server enforces.
func TestParamHeaders(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
		"opts": map[string]any{"type": "object", "properties": map[string]any{
			"n": map[string]any{"type": "integer", "x-mcp-header": "N"},
		}},
	}}
	be := startBackend(t, "geo", true, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "where", InputSchema: schema},
			func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "here"}}}, nil
			})
	})
	url, _ := startVMCP(t, nil, be)
	b64 := "=?base64?" + base64.StdEncoding.EncodeToString([]byte("eu")) + "?="
	cases := []struct {
		name string
		args map[string]any
		hdr  map[string]string
		ok   bool
	}{
		{"both mirrored", map[string]any{"region": "eu", "opts": map[string]any{"n": 42}}, map[string]string{"Region": "eu", "N": "42"}, true},
		{"base64 header", map[string]any{"region": "eu"}, map[string]string{"Region": b64}, true},
		{"absent argument, no header", map[string]any{}, nil, true},
		{"null argument, no header", map[string]any{"region": nil}, nil, true},
		{"header missing", map[string]any{"region": "eu"}, nil, false},
		{"header differs", map[string]any{"region": "eu"}, map[string]string{"Region": "us"}, false},
		{"integer differs", map[string]any{"opts": map[string]any{"n": 42}}, map[string]string{"N": "41"}, false},
		{"header without argument", map[string]any{}, map[string]string{"Region": "eu"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			h := modernHeaders("tools/call", "geo_where")
			for k, v := range c.hdr {
				h.Set("Mcp-Param-"+k, v)
			}
			resp, b := post(t, url, h, body(`1`, "tools/call", map[string]any{"name": "geo_where", "arguments": c.args}))
			r := decodeReply(t, b)
			if c.ok {
				textIs("here")(t, result(t, resp.StatusCode, r))
				return
			}
			jerr := requireError(t, resp.StatusCode, r, http.StatusBadRequest, mcp.CodeHeaderMismatch)
			assert.Contains(t, jerr.Message, "Mcp-Param-")
		})
	}
}

// With no backend ready a list is -32603 (HTTP 200), not an empty success,
// and a call names the backend that is down.
func TestNoBackendAvailable(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	url, srv := startVMCP(t, func(c *config.Config) { c.Backends[0].Timeout = config.Duration(time.Second) },
		config.Backend{Name: "down", URL: gone.URL, Transport: config.TransportStreamableHTTP})
	require.False(t, srv.Ready())
	for _, v := range []string{"tools/list", "prompts/list", "resources/list", "resources/templates/list"} {
		st, r := rpc(t, url, `1`, v, nil)
		jerr := requireError(t, st, r, http.StatusOK, jsonrpc.CodeInternalError)
		assert.Contains(t, jerr.Message, "no backend is available")
	}
	st, r := rpc(t, url, `1`, "server/discover", nil)
	assert.Equal(t, map[string]any{}, result(t, st, r)["capabilities"])
}

// The conformance suite's server-sse-multiple-streams scored vmcp "info"
// (JSON instead of SSE) although its client ranks text/event-stream first.
func TestClientThatPrefersEventStreamGotJSON(t *testing.T) {
	url := twoBackends(t, nil)
	hdr := modernHeaders("tools/list", "")
	hdr.Set("Accept", "text/event-stream, application/json")
	resp, b := post(t, url, hdr, body("1", "tools/list", nil))
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, "text/event-stream", resp.Header.Get("Content-Type"))
	assert.Equal(t, "no", resp.Header.Get("X-Accel-Buffering"))
	data, ok := strings.CutPrefix(string(b), "event: message\ndata: ")
	require.True(t, ok, "one message event: %s", b)
	assert.Equal(t, "1", string(decodeReply(t, []byte(strings.TrimSpace(data))).ID))

	resp, _ = post(t, url, modernHeaders("tools/list", ""), body("2", "tools/list", nil))
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"), "a client ranking JSON first gets JSON")
	hdr.Set("Mcp-Method", "nope")
	resp, _ = post(t, url, hdr, body("3", "nope", nil))
	assert.Equal(t, "application/json", resp.Header.Get("Content-Type"), "an error with its own status stays JSON")
}

// A body of valid JSON that is not an object got -32700 (parse error) with
// a Go type name in its message; it is an invalid request (-32600), as on
// Legacy.
func TestModernScalarBodyGotParseError(t *testing.T) {
	url := twoBackends(t, nil)
	for _, b := range []string{`"x"`, `42`, `true`, ` null `} {
		resp, out := post(t, url, modernHeaders("tools/list", ""), b)
		r := decodeReply(t, out)
		requireError(t, resp.StatusCode, r, 400, jsonrpc.CodeInvalidRequest)
		assert.Contains(t, r.Error.Message, "object", "body %s", b)
	}
}
