package integration

import (
	"context"
	"fmt"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// stringSchemaTools is receiving middleware on a backend: its tools/list
// answers "bad" with an input schema of type "string", which the go-sdk
// server registry refuses (the backend's own registry took a valid one).
func stringSchemaTools(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if lr, ok := res.(*mcp.ListToolsResult); ok && method == "tools/list" {
			out := *lr
			out.Tools = nil
			for _, t := range lr.Tools {
				cp := *t
				if cp.Name == "bad" {
					cp.InputSchema = map[string]any{"type": "string"}
				}
				out.Tools = append(out.Tools, &cp)
			}
			return &out, err
		}
		return res, err
	}
}

// Before one routing table, a tool the go-sdk registry refused was missing
// from Legacy tools/list, yet callable by Legacy clients and listed to
// Modern ones: two tables that disagreed.
func TestToolRefusedByTheRegistryWasListedOnModernAndCallableOnLegacy(t *testing.T) {
	b := harness.StartBackend(t, "web", harness.Stateful, func(s *mcp.Server) {
		echoTool(s, "web", "good")
		echoTool(s, "web", "bad")
		s.AddReceivingMiddleware(stringSchemaTools)
	})
	v := harness.StartVMCP(t, nil, b.Config())
	awaitTools(t, v, "web_good")

	for _, version := range []string{legacy, ""} {
		cs := v.Connect(t, version, nil)
		require.Equal(t, []string{"web_good"}, harness.ToolNames(t, cs), "revision %q lists exactly what the registry accepts", version)
		_, err := call(t, cs, "web_bad", "x")
		require.Contains(t, rpcError(t, err).Message, `unknown tool "web_bad"`, "revision %q", version)
		require.Equal(t, "web/good:x", callText(t, cs, "web_good", "x"))
	}
	w := v.Server.Withheld()
	require.Len(t, w, 1)
	require.Equal(t, "bad", w[0].Name)
	require.Equal(t, "web", w[0].Backend)
}

// counter is the value of a counter series of v, 0 if it does not exist.
func counter(t *testing.T, v *harness.VMCP, name string, labels map[string]string) float64 {
	t.Helper()
	mfs, err := v.Server.Metrics().Registry.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() != name {
			continue
		}
		for _, m := range mf.GetMetric() {
			if matches(m, labels) {
				if h := m.GetHistogram(); h != nil {
					return float64(h.GetSampleCount())
				}
				return m.GetCounter().GetValue()
			}
		}
	}
	return 0
}

func matches(m *dto.Metric, labels map[string]string) bool {
	have := map[string]string{}
	for _, l := range m.GetLabel() {
		have[l.GetName()] = l.GetValue()
	}
	for k, want := range labels {
		if have[k] != want {
			return false
		}
	}
	return true
}

// failTool adds tool name to s, which always fails with a JSON-RPC error.
func failTool(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return nil, &jsonrpc.Error{Code: -32000, Message: "boom"}
		})
}

// Before the call core, vmcp_backend_errors_total counted errors on one of
// five call paths only; every path now counts requests, errors and latency.
func TestMetricsCountEveryBackendRequestOnEveryPath(t *testing.T) {
	web := harness.StartBackend(t, "web", harness.Stateful, func(s *mcp.Server) {
		echoTool(s, "web", "echo")
		failTool(s, "fail")
	})
	modernB := harness.StartBackend(t, "new", harness.Stateless, func(s *mcp.Server) { echoTool(s, "new", "echo") })
	v := harness.StartVMCP(t, nil, web.Config(), modernB.Config(), harness.StdioBackend(t, "local"))
	awaitTools(t, v, "web_echo", "new_echo", "local_echo")

	lc := v.Connect(t, legacy, nil)
	mc := v.Connect(t, "", nil)
	for _, cs := range []*mcp.ClientSession{lc, mc} {
		callText(t, cs, "web_echo", "a")   // Legacy: relay; Modern: shared
		callText(t, cs, "new_echo", "a")   // Legacy: session; Modern: direct
		callText(t, cs, "local_echo", "a") // stdio: session; shared
		_, err := call(t, cs, "web_fail", "a")
		require.Error(t, err)
	}
	for _, rev := range []string{"legacy", "modern"} {
		for _, backend := range []string{"web", "new", "local"} {
			l := map[string]string{"backend": backend, "method": "tools/call", "revision": rev, "outcome": "ok"}
			require.Equal(t, 1.0, counter(t, v, "vmcp_backend_requests_total", l), "requests %v", l)
		}
		l := map[string]string{"backend": "web", "method": "tools/call", "revision": rev}
		require.Equal(t, 1.0, counter(t, v, "vmcp_backend_errors_total", l), "errors %v", l)
		l["outcome"] = "error"
		require.Equal(t, 1.0, counter(t, v, "vmcp_backend_requests_total", l), "requests %v", l)
	}
	for backend, n := range map[string]float64{"web": 4, "new": 2, "local": 2} {
		l := map[string]string{"backend": backend, "method": "tools/call"}
		require.Equal(t, n, counter(t, v, "vmcp_backend_request_duration_seconds", l), "latency observations %v", l)
	}
}

// Before the muted writer, a Legacy client's call on the go-sdk path (here
// to a Modern backend) got -32603 "context canceled" after the client's
// notifications/cancelled; the receiver of a cancellation SHOULD NOT
// respond, and the relay never did.
func TestCancelledCallOnTheSDKPathGotAContextCanceledResponse(t *testing.T) {
	bl := newBlocker()
	b := flowBackend(t, "m", harness.Stateless, nil, nil, func(s *mcp.Server) {
		bl.add(s, "block")
		echoTool(s, "m", "echo")
	})
	t.Cleanup(bl.release)
	v := raVMCP(t, nil, []string{"m_block"}, b)
	c := raConnect(t, v, `{}`)
	for i, id := range []string{`"c-1"`, `41`} {
		marker := fmt.Sprintf("sdk-cancel-%d", i)
		call := c.start(raCallBody(id, "m_block", raMarker(marker)))
		expect(t, bl.started, marker, "backend call started")
		status, msgs := c.post(t, raCancel(id))
		require.Equal(t, http.StatusAccepted, status, "id %s: cancel %v", id, msgs)
		for _, m := range call.end(t, "cancelled call") {
			require.NotEqual(t, "", m.Method, "id %s: a response to a cancelled call: %s", id, m.raw)
		}
	}
	status, msgs := c.post(t, raCallBody("9", "m_echo", `,"arguments":{"text":"after"}`))
	require.Equal(t, http.StatusOK, status)
	require.Len(t, msgs, 1)
	require.Equal(t, "m/echo:after", msgs[0].text())
}

// Before the tools cache was filled on a Legacy client's own session, its
// call of a Modern backend's tool with an x-mcp-header parameter reached
// the backend without the Mcp-Param-* header it requires (-32020
// "missing Mcp-Param-Region header").
func TestLegacyCallOfModernToolWithHeaderParamLackedMcpParamHeader(t *testing.T) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"},
	}}
	b := harness.StartBackend(t, "geo", harness.Stateless, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "where", InputSchema: schema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "region:" + string(req.Params.Arguments)}}}, nil
		})
	})
	v := harness.StartVMCP(t, nil, b.Config())
	awaitTools(t, v, "geo_where")
	for _, version := range []string{legacy, ""} {
		cs := v.Connect(t, version, nil)
		harness.ToolNames(t, cs) // a Modern go-sdk client builds its own Mcp-Param-* headers from its list
		res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "geo_where", Arguments: map[string]any{"region": "eu-west"}})
		require.NoError(t, err, "revision %q", version)
		require.False(t, res.IsError, "revision %q: %+v", version, res.Content)
		require.Contains(t, harness.Text(t, res), "eu-west", "revision %q", version)
	}
}
