package integration

// Helpers of the flows tests (issue 4: server-to-client messages reach
// exactly the right Legacy client). Everything here is prefixed "flow" so
// it cannot collide with the rest of the package.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// flowWait bounds every wait for an event in the flows tests.
const flowWait = 20 * time.Second

func flowCtx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// recorder collects events from handlers and lets a test wait for a
// condition on them without sleeping.
type recorder[T any] struct {
	mu      sync.Mutex
	items   []T
	changed chan struct{} // closed on the next add
}

func (r *recorder[T]) add(v T) {
	r.mu.Lock()
	r.items = append(r.items, v)
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
	r.mu.Unlock()
}

func (r *recorder[T]) all() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.items)
}

// await waits until ok holds on the events so far (checked under the lock;
// ok must not keep the slice) or flowWait passes, and reports which.
func (r *recorder[T]) await(ok func([]T) bool) bool {
	deadline := time.NewTimer(flowWait)
	defer deadline.Stop()
	for {
		r.mu.Lock()
		if ok(r.items) {
			r.mu.Unlock()
			return true
		}
		if r.changed == nil {
			r.changed = make(chan struct{})
		}
		ch := r.changed
		r.mu.Unlock()
		select {
		case <-ch:
		case <-deadline.C:
			return false
		}
	}
}

// count is the number of events matching f.
func count[T any](items []T, f func(T) bool) int {
	n := 0
	for _, v := range items {
		if f(v) {
			n++
		}
	}
	return n
}

// wireMsg is one JSON-RPC message as the test client's transport read it
// off an SSE stream, before the SDK client handled it.
type wireMsg struct {
	post   bool   // read off a POST response stream (false: the GET stream)
	method string // "" for a response
	params json.RawMessage
}

// token is the progress token of a notifications/progress message, as JSON
// (so "7" and 7 differ).
func (m wireMsg) token() string {
	var p struct {
		Token json.RawMessage `json:"progressToken"`
	}
	_ = json.Unmarshal(m.params, &p)
	return string(p.Token)
}

// wireTap records every message of every SSE response the test client
// reads, at the moment the SDK reads its bytes: a message recorded when
// CallTool returns was on the wire before that call's response.
type wireTap struct {
	base http.RoundTripper
	rec  *recorder[wireMsg]
}

func (w *wireTap) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := w.base.RoundTrip(req)
	if err != nil || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		return resp, err
	}
	resp.Body = &wireBody{ReadCloser: resp.Body, post: req.Method == http.MethodPost, rec: w.rec}
	return resp, nil
}

type wireBody struct {
	io.ReadCloser
	post bool
	rec  *recorder[wireMsg]
	line []byte
	data []byte
}

func (b *wireBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.scan(p[:n])
	return n, err
}

func (b *wireBody) scan(p []byte) {
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			b.line = append(b.line, p...)
			return
		}
		b.line = append(b.line, p[:i]...)
		p = p[i+1:]
		line := bytes.TrimSuffix(b.line, []byte("\r"))
		if len(line) == 0 {
			b.flush()
		} else if d, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			b.data = append(b.data, bytes.TrimPrefix(d, []byte(" "))...)
		}
		b.line = b.line[:0]
	}
}

func (b *wireBody) flush() {
	if len(b.data) == 0 {
		return
	}
	msg, err := jsonrpc.DecodeMessage(b.data)
	b.data = nil
	if err != nil {
		return
	}
	m := wireMsg{post: b.post}
	if r, ok := msg.(*jsonrpc.Request); ok {
		m.method, m.params = r.Method, r.Params
	}
	b.rec.add(m)
}

// flowClient is a go-sdk client session to vmcp pinned to 2025-11-25 whose
// notifications and wire traffic are recorded.
type flowClient struct {
	name     string
	cs       *mcp.ClientSession
	wire     recorder[wireMsg]
	progress recorder[*mcp.ProgressNotificationParams]
	logs     recorder[*mcp.LoggingMessageParams]
	updated  recorder[string] // resources/updated URIs
}

// connectFlow connects a Legacy client named name. opts may set
// capabilities and server-to-client handlers (nil: no capabilities); the
// progress, logging and resources/updated handlers are the recorders.
func connectFlow(t *testing.T, v *harness.VMCP, name string, opts *mcp.ClientOptions, roots ...*mcp.Root) *flowClient {
	t.Helper()
	fc := &flowClient{name: name}
	o := mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}}
	if opts != nil {
		o = *opts
	}
	o.ProgressNotificationHandler = func(_ context.Context, r *mcp.ProgressNotificationClientRequest) { fc.progress.add(r.Params) }
	o.LoggingMessageHandler = func(_ context.Context, r *mcp.LoggingMessageRequest) { fc.logs.add(r.Params) }
	o.ResourceUpdatedHandler = func(_ context.Context, r *mcp.ResourceUpdatedNotificationRequest) { fc.updated.add(r.Params.URI) }
	client := mcp.NewClient(&mcp.Implementation{Name: "flows-" + name, Version: "test"}, &o)
	client.AddRoots(roots...)
	hc := &http.Client{Transport: &wireTap{base: http.DefaultTransport, rec: &fc.wire}}
	cctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: v.URL, HTTPClient: hc},
		&mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
	require.NoError(t, err, "connecting client %s", name)
	t.Cleanup(func() { _ = cs.Close() })
	fc.cs = cs
	return fc
}

// legacyVersion is the Legacy revision the flows clients pin.
const legacyVersion = "2025-11-25"

// wireProgress counts the progress notifications for token (JSON) read off
// the wire so far, and how many of them came on a POST (request) stream.
func (fc *flowClient) wireProgress(token string) (total, onPost int) {
	for _, m := range fc.wire.all() {
		if m.method == "notifications/progress" && m.token() == token {
			total++
			if m.post {
				onPost++
			}
		}
	}
	return total, onPost
}

// wireCount counts messages of a method read off the wire so far.
func (fc *flowClient) wireCount(method string) int {
	return count(fc.wire.all(), func(m wireMsg) bool { return m.method == method })
}

// onPost counts messages of a method read off POST (request) streams.
func (fc *flowClient) onPost(method string) int {
	return count(fc.wire.all(), func(m wireMsg) bool { return m.method == method && m.post })
}

// call calls tool with args and, optionally, a progress token.
func (fc *flowClient) call(ctx context.Context, tool string, args map[string]any, token any) (*mcp.CallToolResult, error) {
	p := &mcp.CallToolParams{Name: tool, Arguments: args}
	if token != nil {
		p.Meta = mcp.Meta{"progressToken": token}
	}
	return fc.cs.CallTool(ctx, p)
}

// flowText returns the text of a tool result, or a description of what it
// is instead (so a mismatch shows in an equality assertion).
func flowText(res *mcp.CallToolResult, err error) string {
	if err != nil {
		return "error: " + err.Error()
	}
	var b strings.Builder
	if res.IsError {
		b.WriteString("tool error: ")
	}
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// flowBackend is harness.StartBackend with server and handler options (the
// harness passes none; resource subscriptions need SubscribeHandler, and a
// Stateless backend cancels a handler whose request stream closed only with
// PropagateRequestCancellation). hopts may be nil.
func flowBackend(t *testing.T, name string, mode harness.Mode, opts *mcp.ServerOptions, hopts *mcp.StreamableHTTPOptions, setup func(*mcp.Server)) *harness.Backend {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: name, Version: "test"}, opts)
	if setup != nil {
		setup(srv)
	}
	ho := mcp.StreamableHTTPOptions{}
	if hopts != nil {
		ho = *hopts
	}
	ho.Stateless = mode == harness.Stateless
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &ho)
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	hs := httptest.NewServer(mux)
	b := &harness.Backend{Name: name, URL: hs.URL + "/mcp", Server: srv, HTTP: hs}
	t.Cleanup(b.Close)
	return b
}

// awaitTools waits until a probe client sees every name in want (the
// backends have connected and their catalogue is merged).
func awaitTools(t *testing.T, v *harness.VMCP, want ...string) {
	t.Helper()
	probe := v.Connect(t, legacyVersion, nil)
	require.Eventually(t, func() bool {
		res, err := probe.ListTools(flowCtx(t), nil)
		if err != nil {
			return false
		}
		have := map[string]bool{}
		for _, tool := range res.Tools {
			have[tool.Name] = true
		}
		for _, w := range want {
			if !have[w] {
				return false
			}
		}
		return true
	}, flowWait, 10*time.Millisecond, "tools %v never all listed", want)
	require.NoError(t, probe.Close())
}

// flowStdioEnv makes the test binary serve the flows stdio backend (see
// TestFlowsStdioServerProcess).
const flowStdioEnv = "VMCP_FLOWS_STDIO_SERVER"

// TestFlowsStdioServerProcess is not a test: run as a child process with
// flowStdioEnv=1 it is the stdio backend of the flows tests (the harness's
// stdio server has no tool that reports progress).
func TestFlowsStdioServerProcess(t *testing.T) {
	if os.Getenv(flowStdioEnv) != "1" {
		t.Skip("the stdio backend of the flows tests; runs only as a child process")
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "flows-stdio", Version: "test"}, nil)
	addProgressTool(s, "progress")
	_ = s.Run(context.Background(), &mcp.StdioTransport{})
	os.Exit(0) // print nothing more on stdout
}

// flowStdioBackend is a stdio backend running TestFlowsStdioServerProcess.
func flowStdioBackend(name string) config.Backend {
	return config.Backend{
		Name: name, Transport: config.TransportStdio, Command: os.Args[0],
		Args: []string{"-test.run=^TestFlowsStdioServerProcess$"},
		Env:  map[string]string{flowStdioEnv: "1"},
	}
}

// answerSchema is the requested schema of the flows elicitations.
var answerSchema = map[string]any{
	"type":       "object",
	"properties": map[string]any{"answer": map[string]any{"type": "string"}},
}

// answering is an ElicitationHandler that records each request's message
// and accepts with {"answer": "ans(<message>)"}.
func answering(rec *recorder[string]) func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
	return func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		rec.add(r.Params.Message)
		return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"answer": "ans(" + r.Params.Message + ")"}}, nil
	}
}

// sampling is a CreateMessageWithToolsHandler that records each request's
// first text and answers "sample(<text>)".
func sampling(rec *recorder[string]) func(context.Context, *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
	return func(_ context.Context, r *mcp.CreateMessageWithToolsRequest) (*mcp.CreateMessageWithToolsResult, error) {
		text := ""
		if len(r.Params.Messages) > 0 && len(r.Params.Messages[0].Content) > 0 {
			if tc, ok := r.Params.Messages[0].Content[0].(*mcp.TextContent); ok {
				text = tc.Text
			}
		}
		rec.add(text)
		return &mcp.CreateMessageWithToolsResult{Role: "assistant", Model: "flows", Content: []mcp.Content{&mcp.TextContent{Text: "sample(" + text + ")"}}}, nil
	}
}

// logMarker returns the marker and index of a flows log message's data.
func logMarker(p *mcp.LoggingMessageParams) (string, int) {
	m, _ := p.Data.(map[string]any)
	marker, _ := m["marker"].(string)
	i, _ := m["i"].(float64)
	return marker, int(i)
}

// sortedURIs lists root URIs sorted and joined by ",".
func sortedURIs(roots []*mcp.Root) string {
	uris := make([]string, 0, len(roots))
	for _, r := range roots {
		uris = append(uris, r.URI)
	}
	sort.Strings(uris)
	return strings.Join(uris, ",")
}

// capsString describes which client capabilities a backend session saw.
func capsString(ss *mcp.ServerSession) string {
	var c *mcp.ClientCapabilities
	if p := ss.InitializeParams(); p != nil {
		c = p.Capabilities
	}
	if c == nil {
		c = &mcp.ClientCapabilities{}
	}
	return fmt.Sprintf("elicitation=%t sampling=%t roots=%t", c.Elicitation != nil, c.Sampling != nil, c.RootsV2 != nil)
}
