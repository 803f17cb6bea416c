package integration

// Progress and logs for Modern (2026-07-28) clients through vmcp: on the
// request's own response stream, before the result, from every kind of
// backend (Legacy HTTP on the shared control connection, Modern HTTP by
// direct POST, stdio of either era, parked MRTR calls).

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// reportLevels are the levels the report tool logs at, in order.
var reportLevels = []mcp.LoggingLevel{"debug", "info", "warning", "error"}

// addReport registers "report" as the stdio server has it: one log per
// reportLevels (data {marker, level}), then progress 1..n with the
// request's token and the marker as message. With a non-nil gate, it
// waits for gate to close first (to overlap concurrent calls).
func addReport(s *mcp.Server, gate func(marker string)) {
	s.AddTool(&mcp.Tool{Name: "report", InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		a := flowArgsOf(req)
		if gate != nil {
			gate(a.Marker)
		}
		for _, lv := range reportLevels {
			data := map[string]any{"marker": a.Marker, "level": string(lv)}
			if err := req.Session.Log(ctx, &mcp.LoggingMessageParams{Level: lv, Logger: "report", Data: data}); err != nil {
				return nil, err
			}
		}
		if tok := req.Params.GetProgressToken(); tok != nil {
			for i := 1; i <= a.N; i++ {
				p := &mcp.ProgressNotificationParams{ProgressToken: tok, Progress: float64(i), Total: float64(a.N), Message: a.Marker}
				if err := req.Session.NotifyProgress(ctx, p); err != nil {
					return nil, err
				}
			}
		}
		return flowResult("reported:%s", a.Marker), nil
	})
}

// connectModern is connectFlow for a Modern client: the go-sdk default,
// which speaks 2026-07-28 to vmcp (checked).
func connectModern(t *testing.T, v *harness.VMCP, name string, opts *mcp.ClientOptions) *flowClient {
	t.Helper()
	fc := &flowClient{name: name}
	o := mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	if opts != nil {
		o = *opts
	}
	o.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { fc.progress.add(r.Params) }
	o.LoggingMessageHandler = func(_ context.Context, r *mcp.LoggingMessageRequest) { fc.logs.add(r.Params) }
	client := mcp.NewClient(&mcp.Implementation{Name: "modern-" + name, Version: "test"}, &o)
	hc := &http.Client{Transport: &wireTap{base: http.DefaultTransport, rec: &fc.wire}}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: v.URL, HTTPClient: hc}, nil)
	require.NoError(t, err, "connecting client %s", name)
	t.Cleanup(func() { _ = cs.Close() })
	require.GreaterOrEqual(t, cs.InitializeResult().ProtocolVersion, "2026-07-28", "client %s is not Modern", name)
	fc.cs = cs
	return fc
}

// report calls tool with a progress token (nil: none) and a logLevel
// ("": none) in _meta, the way a go-sdk client sets them per request.
func (fc *flowClient) report(ctx context.Context, tool, marker string, n int, token any, level mcp.LoggingLevel) (*mcp.CallToolResult, error) {
	p := &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"marker": marker, "n": n}, Meta: mcp.Meta{}}
	if token != nil {
		p.Meta["progressToken"] = token
	}
	if level != "" {
		p.Meta[mcp.MetaKeyLogLevel] = string(level)
	}
	return fc.cs.CallTool(ctx, p)
}

// wireLogs are the levels of the log messages with marker read off POST
// streams so far, in order.
func (fc *flowClient) wireLogs(marker string) []string {
	var out []string
	for _, m := range fc.wire.all() {
		var p struct {
			Data struct{ Marker, Level string } `json:"data"`
		}
		if m.method == "notifications/message" && m.post && json.Unmarshal(m.params, &p) == nil && p.Data.Marker == marker {
			out = append(out, p.Data.Level)
		}
	}
	return out
}

// handlerLogs are the levels of the log messages with marker the client's
// handler got.
func handlerLogs(ps []*mcp.LoggingMessageParams, marker string) []string {
	var out []string
	for _, p := range ps {
		if m, _ := p.Data.(map[string]any); m != nil && m["marker"] == marker {
			out = append(out, string(p.Level))
		}
	}
	return out
}

// everyBackendKind starts vmcp over a Legacy HTTP, a Modern HTTP, a
// Modern stdio, a Legacy stdio and a Legacy SSE backend, each with the
// report tool, and returns the advertised tool names by backend kind.
func everyBackendKind(t *testing.T) (*harness.VMCP, map[string]string) {
	legacy := harness.StartBackend(t, "legacyhttp", harness.Stateful, func(s *mcp.Server) { addReport(s, nil) })
	modern := harness.StartBackend(t, "modernhttp", harness.Stateless, func(s *mcp.Server) { addReport(s, nil) })
	v := harness.StartVMCP(t, nil, legacy.Config(), modern.Config(), harness.StdioBackend(t, "stdio"),
		harness.LegacyStdioBackend(t, "legacystdio"), startSSEBackend(t, "sse", func(s *mcp.Server) { addReport(s, nil) }))
	tools := map[string]string{"Legacy HTTP": "legacyhttp_report", "Modern HTTP": "modernhttp_report",
		"Modern stdio": "stdio_report", "Legacy stdio": "legacystdio_report", "Legacy SSE": "sse_report"}
	awaitTools(t, v, "legacyhttp_report", "modernhttp_report", "stdio_report", "legacystdio_report", "sse_report")
	return v, tools
}

// startSSEBackend serves a go-sdk server over the 2024-11-05 HTTP+SSE
// transport on httptest and returns its vmcp config.
func startSSEBackend(t *testing.T, name string, setup func(*mcp.Server)) config.Backend {
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "test"}, nil)
	setup(srv)
	hs := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return config.Backend{Name: name, URL: hs.URL, Transport: config.TransportSSE}
}

// TestModernProgressLostOnEveryBackendKind pins the missing progress of
// Modern clients: through vmcp a Modern request's progressToken got no
// notifications/progress at all. Each must be on the request's own stream
// before the result (3 of 3, in order), with the client's token as sent
// (string or number), and, with no logLevel, no log message (MUST NOT).
func TestModernProgressLostOnEveryBackendKind(t *testing.T) {
	v, tools := everyBackendKind(t)
	c := connectModern(t, v, "p", nil)
	i := 0
	for kind, tool := range tools {
		for _, tok := range []any{"tok-" + kind, 4200 + i} {
			i++
			marker := fmt.Sprintf("%s/%v", kind, tok)
			res, err := c.report(flowCtx(t), tool, marker, 3, tok, "")
			onWire, onPost := c.wireProgress(jsonOf(tok))
			require.Equal(t, "reported:"+marker, flowText(res, err), kind)
			assert.Equal(t, 3, onWire, "%s: progress read before the result", kind)
			assert.Equal(t, 3, onPost, "%s: progress on the request's own stream", kind)
			require.True(t, c.progress.await(func(ps []*mcp.ProgressNotificationParams) bool { return len(progressFor(ps, tok)) >= 3 }), kind)
			want := tok
			if n, ok := tok.(int); ok {
				want = float64(n)
			}
			for j, p := range progressFor(c.progress.all(), tok) {
				assert.Equal(t, float64(j+1), p.Progress, "%s: order", kind)
				assert.Equal(t, marker, p.Message, "%s: another call's progress", kind)
				assert.Equal(t, want, p.ProgressToken, "%s: token changed", kind)
			}
			assert.Empty(t, c.wireLogs(marker), "%s: log messages for a request without logLevel", kind)
		}
	}
	assert.Empty(t, c.logs.all(), "no request set a logLevel")
}

// TestModernLogsLostOrUnfiltered pins the missing logs of Modern clients:
// a request with _meta logLevel "warning" must get exactly the backend's
// warning and error messages of that call, on its own stream before the
// result, from every kind of backend.
func TestModernLogsLostOrUnfiltered(t *testing.T) {
	v, tools := everyBackendKind(t)
	c := connectModern(t, v, "l", nil)
	for kind, tool := range tools {
		marker := "logs/" + kind
		res, err := c.report(flowCtx(t), tool, marker, 0, nil, "warning")
		require.Equal(t, "reported:"+marker, flowText(res, err), kind)
		assert.Equal(t, []string{"warning", "error"}, c.wireLogs(marker), "%s: logs before the result, at or above warning", kind)
		require.True(t, c.logs.await(func(ps []*mcp.LoggingMessageParams) bool { return len(handlerLogs(ps, marker)) >= 2 }), kind)
		assert.Equal(t, []string{"warning", "error"}, handlerLogs(c.logs.all(), marker), kind)
	}
}

// TestModernSameProgressTokenCrossedBetweenCalls pins token collisions on
// the control connection shared by all Modern clients: two calls in flight
// at once with the same progressToken must each get only their own three
// notifications (vmcp mints a token per call for the backend), and logs
// only of their own call.
func TestModernSameProgressTokenCrossedBetweenCalls(t *testing.T) {
	var mu sync.Mutex
	arrived := map[string]bool{}
	both := make(chan struct{})
	gate := func(marker string) { // the first two calls wait for each other
		mu.Lock()
		arrived[marker] = true
		if len(arrived) == 2 {
			close(both)
		}
		mu.Unlock()
		select {
		case <-both:
		case <-time.After(flowWait):
		}
	}
	legacy := harness.StartBackend(t, "legacyhttp", harness.Stateful, func(s *mcp.Server) { addReport(s, gate) })
	v := harness.StartVMCP(t, nil, legacy.Config())
	awaitTools(t, v, "legacyhttp_report")
	clients := []*flowClient{connectModern(t, v, "a", nil), connectModern(t, v, "b", nil)}
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := c.report(flowCtx(t), "legacyhttp_report", "call-"+c.name, 3, "same", "info")
			assert.Equal(t, "reported:call-"+c.name, flowText(res, err))
		}()
	}
	wg.Wait()
	for _, c := range clients {
		other := "call-a"
		if c.name == "a" {
			other = "call-b"
		}
		total, onPost := c.wireProgress(`"same"`)
		assert.Equal(t, 3, total, "client %s: progress notifications", c.name)
		assert.Equal(t, 3, onPost, "client %s: on its own stream", c.name)
		require.True(t, c.progress.await(func(ps []*mcp.ProgressNotificationParams) bool { return len(ps) >= 3 }))
		for _, p := range c.progress.all() {
			assert.Equal(t, "call-"+c.name, p.Message, "client %s got another call's progress", c.name)
		}
		assert.Equal(t, []string{"info", "warning", "error"}, c.wireLogs("call-"+c.name), "client %s: its own logs", c.name)
		assert.Empty(t, c.wireLogs(other), "client %s got another call's logs", c.name)
	}
}

// TestModernForeignProgressTokenDelivered pins progress a backend sends
// with a token no call sent: it must reach no client and be counted in
// vmcp_undeliverable_messages_total{method="notifications/progress"}.
func TestModernForeignProgressTokenDelivered(t *testing.T) {
	legacy := harness.StartBackend(t, "legacyhttp", harness.Stateful, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "rogue", InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			err := req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{ProgressToken: "nobody-sent-this", Progress: 1})
			return flowResult("rogue:%v", err), nil
		})
	})
	v := harness.StartVMCP(t, nil, legacy.Config())
	awaitTools(t, v, "legacyhttp_rogue")
	c := connectModern(t, v, "r", nil)
	counter := v.Server.Metrics().Undeliverable.WithLabelValues("notifications/progress")
	before := testutil.ToFloat64(counter)
	res, err := c.cs.CallTool(flowCtx(t), &mcp.CallToolParams{Name: "legacyhttp_rogue", Meta: mcp.Meta{"progressToken": "mine"}})
	require.Equal(t, "rogue:<nil>", flowText(res, err))
	assert.Equal(t, 0, c.wireCount("notifications/progress"), "a foreign token reached the client")
	assert.GreaterOrEqual(t, testutil.ToFloat64(counter)-before, 1.0, "dropped progress not counted")
}

// TestModernDiscoverOmitsLogging pins server/discover for Modern clients:
// it must advertise logging when a backend offers it.
func TestModernDiscoverOmitsLogging(t *testing.T) {
	b := harness.StartBackend(t, "legacyhttp", harness.Stateful, func(s *mcp.Server) { addReport(s, nil) })
	v := harness.StartVMCP(t, func(*config.Config) {}, b.Config())
	awaitTools(t, v, "legacyhttp_report")
	c := connectModern(t, v, "d", nil)
	assert.NotNil(t, c.cs.InitializeResult().Capabilities.Logging, "server/discover capabilities lack logging")
}
