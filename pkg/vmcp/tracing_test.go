package vmcp_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// A Legacy call the relay serves: the endpoint's server span carries the
// MCP attributes, the call core's client span is its child, and the HTTP
// backend receives that child as its traceparent.
func TestTracingLegacyRelayedCallSpansAndBackendTraceparent(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, false)
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	cs := connectTraced(t, v, "2025-11-25", nil)
	echo(t, cs, "alpha_echo", nil)

	backend := log.await(t, trace.SpanKindClient, "tools/call echo")
	server := log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	requireChild(t, server, backend, "relay")
	a := attrs(server)
	require.Equal(t, "tools/call", a["mcp.method.name"])
	require.Equal(t, "alpha_echo", a["gen_ai.tool.name"])
	require.Equal(t, "execute_tool", a["gen_ai.operation.name"])
	require.Equal(t, "legacy", a["vmcp.revision"])
	require.Equal(t, "alpha", a["vmcp.backend"])
	require.Equal(t, cs.ID(), a["mcp.session.id"])
	require.Equal(t, "2025-11-25", a["mcp.protocol.version"])
	require.Equal(t, "http", a["network.protocol.name"])
	require.Equal(t, codes.Unset, server.Status().Code)

	want := "00-" + backend.SpanContext().TraceID().String() + "-" + backend.SpanContext().SpanID().String() + "-01"
	require.Contains(t, b.traceparents(), want, "the backend span is the backend's parent")
	require.Zero(t, b.leakedExchange(), "the internal Vmcp-Exchange header never reaches a backend")
}

// A traceparent header from the client makes the client's span the parent
// of vmcp's, and the trace id reaches the backend.
func TestTracingClientTraceparentHeaderIsTheParent(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, false)
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	const traceID, parentID = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	cs := connectTraced(t, v, "2025-11-25", map[string]string{"traceparent": "00-" + traceID + "-" + parentID + "-01"})
	echo(t, cs, "alpha_echo", nil)

	server := log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	require.Equal(t, traceID, server.SpanContext().TraceID().String())
	require.Equal(t, parentID, server.Parent().SpanID().String())
	require.True(t, server.Parent().IsRemote())
	var reached bool
	for _, tp := range b.traceparents() {
		reached = reached || strings.HasPrefix(tp, "00-"+traceID+"-")
	}
	require.True(t, reached, "the client's trace id reaches the backend: %v", b.traceparents())
}

// A traceparent in a relayed call's _meta (MCP convention) is the parent
// of vmcp's span, when the header has none.
func TestTracingRelayedCallMetaTraceparentIsTheParent(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, false)
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	cs := connectTraced(t, v, "2025-11-25", nil)
	const traceID, parentID = "5bf92f3577b34da6a3ce929d0e0e4737", "10f067aa0ba902b8"
	echo(t, cs, "alpha_echo", mcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01"})

	backend := log.await(t, trace.SpanKindClient, "tools/call echo")
	server := log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	requireChild(t, server, backend, "relay")
	require.Equal(t, traceID, server.SpanContext().TraceID().String())
	require.Equal(t, parentID, server.Parent().SpanID().String())
}

// A Legacy call to a stdio backend is relayed (Core.Do on the session's
// go-sdk connection): the backend span is the server span's child, and a
// traceparent in the request's _meta (MCP convention) is the server span's
// parent.
func TestTracingLegacyStdioBackendWithMetaTraceparent(t *testing.T) {
	log, opts := newSpanLog(t)
	v := harness.StartVMCPWithOptions(t, opts, nil, harness.StdioBackend(t, "alpha"))
	cs := connectTraced(t, v, "2025-11-25", nil)
	const traceID, parentID = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	echo(t, cs, "alpha_echo", mcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01"})

	backend := log.await(t, trace.SpanKindClient, "tools/call echo")
	server := log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	requireChild(t, server, backend, "relay")
	require.Equal(t, traceID, server.SpanContext().TraceID().String(), "_meta.traceparent is the parent")
	require.Equal(t, parentID, server.Parent().SpanID().String())
	require.Equal(t, cs.ID(), attrs(server)["mcp.session.id"])
}

// A failed backend request records its error on the backend span and
// marks the client span failed.
func TestTracingBackendErrorIsRecorded(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, false)
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	cs := connectTraced(t, v, "2025-11-25", nil)
	_, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha_boom", Arguments: map[string]any{}})
	require.Error(t, err)

	backend := log.await(t, trace.SpanKindClient, "tools/call boom")
	require.Equal(t, codes.Error, backend.Status().Code)
	require.NotEmpty(t, backend.Events(), "RecordError adds an exception event")
	require.Equal(t, "exception", backend.Events()[0].Name)
	server := log.await(t, trace.SpanKindServer, "tools/call alpha_boom")
	require.Equal(t, codes.Error, server.Status().Code)
	require.NotEmpty(t, attrs(server)["error.type"])
}

// jsonrpcError is a tool handler failure the go-sdk server sends as a
// JSON-RPC error.
type jsonrpcError struct{}

func (*jsonrpcError) Error() string { return "boom failed" }

// Tracing is off by default: nothing is propagated to a backend when the
// client sent no trace context.
func TestTracingOffByDefaultSendsNoTraceparent(t *testing.T) {
	b := startTracedBackend(t, false)
	v := harness.StartVMCP(t, nil, b.config())
	require.False(t, v.Config.Telemetry.Tracing.Enabled)
	cs := connectTraced(t, v, "2025-11-25", nil)
	echo(t, cs, "alpha_echo", nil)
	require.Empty(t, b.traceparents())
}

// A Modern call: the server span takes method and tool from the Mcp-Method
// and Mcp-Name headers (the body is not decoded again), revision modern;
// the call core's backend span is its child (one direct POST to a Modern
// backend), and the backend receives it as its traceparent.
func TestTracingModernCallSpansAndBackendTraceparent(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, true)
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	cs := v.Connect(t, "", nil)
	require.Empty(t, cs.ID(), "a Modern client")
	echo(t, cs, "alpha_echo", nil)

	backend := log.await(t, trace.SpanKindClient, "tools/call echo")
	server := log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	requireChild(t, server, backend, "direct")
	a := attrs(server)
	require.Equal(t, "modern", a["vmcp.revision"])
	require.Equal(t, "tools/call", a["mcp.method.name"])
	require.Equal(t, "alpha_echo", a["gen_ai.tool.name"])
	require.Equal(t, "2026-07-28", a["mcp.protocol.version"])
	require.Equal(t, "alpha", a["vmcp.backend"])
	require.Empty(t, a["mcp.session.id"], "stateless")
	require.Equal(t, "modern", attrs(backend)["vmcp.revision"])

	want := "00-" + backend.SpanContext().TraceID().String() + "-" + backend.SpanContext().SpanID().String() + "-01"
	require.Contains(t, b.traceparents(), want, "the backend span is the backend's parent")
	require.Zero(t, b.leakedExchange(), "the internal Vmcp-Exchange header never reaches a backend")
}

// A Modern call over the backend's shared control connection (a stdio
// backend) is traced the same way.
func TestTracingModernSharedConnectionCallSpans(t *testing.T) {
	log, opts := newSpanLog(t)
	v := harness.StartVMCPWithOptions(t, opts, nil, harness.StdioBackend(t, "alpha"))
	cs := v.Connect(t, "", nil)
	echo(t, cs, "alpha_echo", nil)
	backend := log.await(t, trace.SpanKindClient, "tools/call echo")
	server := log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	requireChild(t, server, backend, "shared")
}

// Regression: a Legacy request without params (ping, tools/list sent
// bare) has typed-nil params in the go-sdk middleware; observing it must
// not panic.
func TestTracingLegacyRequestWithoutParamsIsServed(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, false)
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	post := func(sid, body string) (*http.Response, string) {
		req, err := http.NewRequest(http.MethodPost, v.URL, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2025-11-25")
		if sid != "" {
			req.Header.Set("Mcp-Session-Id", sid)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		return resp, string(data)
	}
	resp, _ := post("", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	sid := resp.Header.Get("Mcp-Session-Id")
	require.NotEmpty(t, sid)
	post(sid, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	resp, body := post(sid, `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Contains(t, body, "alpha_echo")
	require.Equal(t, sid, attrs(log.await(t, trace.SpanKindServer, "tools/list"))["mcp.session.id"])
	resp, _ = post(sid, `{"jsonrpc":"2.0","id":3,"method":"ping"}`) // the go-sdk path: typed-nil params
	require.Equal(t, http.StatusOK, resp.StatusCode)
	log.await(t, trace.SpanKindServer, "ping")
}

// A client's _meta.traceparent is rewritten to name vmcp's backend span
// (the client's trace, vmcp's parent) for backends that read _meta, on
// the relay over streamable HTTP and over SSE.
func TestTracingMetaTraceparentNamesVMCPsBackendSpan(t *testing.T) {
	for _, tc := range []struct {
		name, via string
		backend   func(t *testing.T) config.Backend
	}{
		{"relay", "relay", func(t *testing.T) config.Backend { return startTracedBackend(t, false).config() }},
		{"relay over SSE", "relay", func(t *testing.T) config.Backend {
			c := startTracedSSEBackend(t).config()
			c.Transport = config.TransportSSE
			return c
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log, opts := newSpanLog(t)
			v := harness.StartVMCPWithOptions(t, opts, nil, tc.backend(t))
			cs := connectTraced(t, v, "2025-11-25", nil)
			const traceID = "6bf92f3577b34da6a3ce929d0e0e4738"
			res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha_meta", Arguments: map[string]any{},
				Meta: mcp.Meta{"traceparent": "00-" + traceID + "-20f067aa0ba902b9-01"}})
			require.NoError(t, err)
			backend := log.await(t, trace.SpanKindClient, "tools/call meta")
			require.Equal(t, tc.via, attrs(backend)["vmcp.via"])
			require.Equal(t, "00-"+traceID+"-"+backend.SpanContext().SpanID().String()+"-01", harness.Text(t, res))
		})
	}
}
