package vmcp_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
	"go.opentelemetry.io/otel/trace"
)

// Regression: a Modern request's _meta.traceparent (and tracestate) was
// not taken as the parent of its server span when it had no traceparent
// header; it is now, on every path (direct here), and the backend's _meta
// names vmcp's backend span in the client's trace.
func TestTracingModernMetaTraceparentIsTheParent(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, true)
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	cs := v.Connect(t, "", nil)
	require.Empty(t, cs.ID(), "a Modern client")
	const traceID, parentID = "6bf92f3577b34da6a3ce929d0e0e4738", "20f067aa0ba902b9"
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha_meta", Arguments: map[string]any{},
		Meta: mcp.Meta{"traceparent": "00-" + traceID + "-" + parentID + "-01", "tracestate": "vendor=abc"}})
	require.NoError(t, err)

	server := log.await(t, trace.SpanKindServer, "tools/call alpha_meta")
	require.Equal(t, traceID, server.SpanContext().TraceID().String(), "the client's trace")
	require.Equal(t, parentID, server.Parent().SpanID().String(), "the _meta's span is the parent")
	require.True(t, server.Parent().IsRemote())
	require.Equal(t, "vendor=abc", server.Parent().TraceState().String(), "tracestate taken with it")
	backend := log.await(t, trace.SpanKindClient, "tools/call meta")
	require.Equal(t, server.SpanContext().SpanID(), backend.Parent().SpanID())
	require.Equal(t, "00-"+traceID+"-"+backend.SpanContext().SpanID().String()+"-01", harness.Text(t, res),
		"the backend's _meta.traceparent is vmcp's backend span")
}

// A traceparent header still wins over _meta on a Modern request.
func TestTracingModernHeaderTraceparentWinsOverMeta(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, true)
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	const headerTrace = "0af7651916cd43dd8448eb211c80319c"
	client := mcp.NewClient(&mcp.Implementation{Name: "traced-client", Version: "test"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	tr := &mcp.StreamableClientTransport{Endpoint: v.URL, HTTPClient: &http.Client{Transport: headerTransport{"traceparent": "00-" + headerTrace + "-b7ad6b7169203331-01"}}}
	cs, err := client.Connect(context.Background(), tr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	echo(t, cs, "alpha_echo", mcp.Meta{"traceparent": "00-6bf92f3577b34da6a3ce929d0e0e4738-20f067aa0ba902b9-01"})
	server := log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	require.Equal(t, headerTrace, server.SpanContext().TraceID().String())
	require.Equal(t, "b7ad6b7169203331", server.Parent().SpanID().String())
}

// Regression: a parked MRTR call (a Modern client that declared
// elicitation calling a Legacy backend) reached the backend with no
// traceparent: its backend request now carries vmcp's backend span, in the
// header and in a client's _meta.traceparent.
func TestTracingParkedCallCarriesTheBackendSpan(t *testing.T) {
	log, opts := newSpanLog(t)
	srv := mcp.NewServer(&mcp.Implementation{Name: "alpha", Version: "test"}, nil)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		tp, _ := req.Params.Meta["traceparent"].(string)
		if _, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object"}}); err != nil {
			return nil, err
		}
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: tp}}}, nil
	})
	b := serveTraced(t, mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config())
	client := mcp.NewClient(&mcp.Implementation{Name: "asked", Version: "test"}, &mcp.ClientOptions{
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{}}, nil
		},
	})
	cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: v.URL}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	const traceID = "6bf92f3577b34da6a3ce929d0e0e4738"
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha_ask", Arguments: map[string]any{},
		Meta: mcp.Meta{"traceparent": "00-" + traceID + "-20f067aa0ba902b9-01"}})
	require.NoError(t, err)

	first := log.await(t, trace.SpanKindClient, "tools/call ask") // the first round (the retry's names no tool)
	require.Equal(t, "keyed", attrs(first)["vmcp.via"])           // Do on a keyed session, parked while it asks
	require.Equal(t, traceID, first.SpanContext().TraceID().String())
	want := "00-" + traceID + "-" + first.SpanContext().SpanID().String() + "-01"
	require.Equal(t, want, harness.Text(t, res), "the backend's _meta.traceparent is the first round's backend span")
	require.Contains(t, b.traceparents(), want, "the parked call's POST carries the backend span as traceparent")
}
