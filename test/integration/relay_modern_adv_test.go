package integration

// Adversarial tests of the relay on a Modern session: a Legacy client's
// calls relayed raw to a stateless (2026-07-28) backend. Some use a real
// go-sdk stateless backend, others one whose "evil" tool is answered by
// hand (advBackend), to send what a go-sdk server never would.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// advBackend is a stateless go-sdk backend with tools "echo" and "evil";
// each POST of tools/call for "evil" is answered by fake instead (n counts
// them from 1; req is the request as posted). Its bodies are recorded.
type advBackend struct {
	cfg    config.Backend
	posts  atomic.Int64
	mu     sync.Mutex
	bodies []map[string]json.RawMessage
}

// startAdvBackend starts an advBackend.
func startAdvBackend(t *testing.T, fake func(w http.ResponseWriter, req map[string]json.RawMessage, n int64)) *advBackend {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "ev", Version: "test"}, nil)
	echoTool(srv, "ev", "echo")
	srv.AddTool(&mcp.Tool{Name: "evil", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return textResultOf("served by the sdk"), nil
	})
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	ab := &advBackend{}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Name") != "evil" {
			sdk.ServeHTTP(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		var req map[string]json.RawMessage
		_ = json.Unmarshal(body, &req)
		ab.mu.Lock()
		ab.bodies = append(ab.bodies, req)
		ab.mu.Unlock()
		fake(w, req, ab.posts.Add(1))
	}))
	t.Cleanup(hs.Close)
	ab.cfg = config.Backend{Name: "ev", URL: hs.URL, Transport: config.TransportStreamableHTTP}
	return ab
}

// advSSE writes msgs as one SSE response.
func advSSE(w http.ResponseWriter, msgs ...string) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, m := range msgs {
		fmt.Fprintf(w, "event: message\ndata: %s\n\n", m)
	}
}

// advResult is a JSON-RPC response to req with a raw result.
func advResult(req map[string]json.RawMessage, result string) string {
	return `{"jsonrpc":"2.0","id":` + string(req["id"]) + `,"result":` + result + `}`
}

// advElicit is an input_required result asking one elicitation, with a
// raw requestState member tail (e.g. `,"requestState":"s"`).
const advElicit = `{"resultType":"input_required","inputRequests":{"q":{"method":"elicitation/create","params":{"message":"name?","requestedSchema":{"type":"object","properties":{"v":{"type":"string"}}}}}}`

// advVMCP starts vmcp over ab and waits for its tools.
func advVMCP(t *testing.T, ab *advBackend) *harness.VMCP {
	t.Helper()
	v := harness.StartVMCP(t, nil, ab.cfg)
	awaitTools(t, v, "ev_echo", "ev_evil")
	return v
}

// A Legacy client that declared no roots was announced to a stateless
// backend as supporting roots: the relay encoded its capabilities with
// the go-sdk's deprecated value-typed Roots field, which is never omitted
// ("roots":{}), so a backend that asks for roots when the client has them
// asked, and the call failed on vmcp's refusal to ask the client.
func TestLegacyClientWithoutRootsAnnouncedRootsToStatelessBackend(t *testing.T) {
	b := harness.StartBackend(t, "sl", harness.Stateless, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "caps", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c := req.Session.InitializeParams().Capabilities
			return textResultOf(fmt.Sprintf("roots=%v elicitation=%v", c.RootsV2 != nil, c.Elicitation != nil)), nil
		})
	})
	v := harness.StartVMCP(t, nil, b.Config())
	awaitTools(t, v, "sl_caps")
	none := v.Connect(t, legacy, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	roots := v.Connect(t, legacy, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}})
	require.Equal(t, "roots=false elicitation=false", callText(t, none, "sl_caps", ""))
	require.Equal(t, "roots=true elicitation=false", callText(t, roots, "sl_caps", ""))
	require.Equal(t, 2.0, relayed(v, "tools/call"))
}

// advCall calls ev_evil from a fresh answering Legacy client and returns
// the result's text or the error.
func advCall(t *testing.T, v *harness.VMCP) string {
	t.Helper()
	cs := connectAnswering(t, v, legacy)
	res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "ev_evil", Arguments: map[string]any{}})
	if err != nil {
		return "error: " + err.Error()
	}
	b, _ := json.Marshal(res)
	return "result: " + string(b)
}

// A Modern backend's input_required result whose requestState is not a
// string failed to decode as a round and was taken for the final result:
// the Legacy client got an empty success (resultType, inputRequests and
// requestState stripped) instead of an error.
func TestModernInputRequiredWithNonStringStateWasAnEmptySuccess(t *testing.T) {
	for name, tail := range map[string]string{
		"number state": `,"requestState":5}`,
		"object state": `,"requestState":{"a":1}}`,
	} {
		t.Run(name, func(t *testing.T) {
			ab := startAdvBackend(t, func(w http.ResponseWriter, req map[string]json.RawMessage, _ int64) {
				advSSE(w, advResult(req, advElicit+tail))
			})
			v := advVMCP(t, ab)
			got := advCall(t, v)
			require.True(t, strings.HasPrefix(got, "error: "), "got %s", got)
		})
	}
}

// An input_required result whose inputRequests is not an object was taken
// for the final result too (an empty success).
func TestModernInputRequiredWithMalformedRequestsWasAnEmptySuccess(t *testing.T) {
	ab := startAdvBackend(t, func(w http.ResponseWriter, req map[string]json.RawMessage, _ int64) {
		advSSE(w, advResult(req, `{"resultType":"input_required","inputRequests":[1,2],"requestState":"s"}`))
	})
	v := advVMCP(t, ab)
	got := advCall(t, v)
	require.True(t, strings.HasPrefix(got, "error: "), "got %s", got)
}

// A request whose _meta is null (which a go-sdk server takes for none, and
// which the relay sends a Legacy backend as is) failed -32602 on a Modern
// backend: RequestMeta took null for a _meta that is not an object.
func TestModernNullMetaWasInvalidParams(t *testing.T) {
	for _, mode := range []harness.Mode{harness.Stateful, harness.Stateless} {
		t.Run(mode.String(), func(t *testing.T) {
			b := harness.StartBackend(t, "sl", mode, func(s *mcp.Server) { echoTool(s, "sl", "echo") })
			v := harness.StartVMCP(t, nil, b.Config())
			awaitTools(t, v, "sl_echo")
			c := raConnect(t, v, `{}`)
			_, msgs := c.post(t, raCallBody(`"n"`, "sl_echo", `,"arguments":{"text":"hi"},"_meta":null`))
			require.Len(t, msgs, 1)
			require.Equal(t, "sl/echo:hi", msgs[0].text())
			require.Equal(t, 1.0, relayed(v, "tools/call"))
		})
	}
}

// A resource URI with non-ASCII characters failed on a
// go-sdk stateless backend once relayed: the relay sent Mcp-Name
// base64-encoded (=?base64?…?=, SEP-2243), which the go-sdk server
// compares undecoded with the body ("header mismatch"), where the go-sdk
// path (whose client sends the name as is) had worked.
func TestModernNonASCIINameMismatchedMcpName(t *testing.T) {
	const uri = "test://café"
	b := harness.StartBackend(t, "sl", harness.Stateless, func(s *mcp.Server) {
		echoTool(s, "sl", "echo")
		s.AddResource(&mcp.Resource{URI: uri, Name: "doc"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, Text: "body"}}}, nil
		})
	})
	v := harness.StartVMCP(t, nil, b.Config())
	awaitTools(t, v, "sl_echo")
	cs := v.Connect(t, legacy, nil)
	rr, err := cs.ReadResource(ctx(t), &mcp.ReadResourceParams{URI: uri})
	require.NoError(t, err)
	require.Equal(t, "body", rr.Contents[0].Text)
	require.Equal(t, 1.0, relayed(v, "resources/read"))
}
