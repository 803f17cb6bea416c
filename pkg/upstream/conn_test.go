package upstream_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/vmcp/vmcp/pkg/backends"
	bsession "github.com/vmcp/vmcp/pkg/backends/session"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/test/integration/harness"
	"github.com/vmcp/vmcp/test/integration/harness/servertools"
)

// connBackend is backend "b" over transport: the stdio test server
// program, or an in-process go-sdk server over SSE; both serve
// servertools' tools.
func connBackend(t *testing.T, transport string) config.Backend {
	t.Helper()
	if transport == config.TransportStdio {
		return harness.StdioBackend(t, "b")
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "b", Version: "test"}, nil)
	servertools.Add(srv)
	hs := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	return config.Backend{Name: "b", URL: hs.URL, Transport: config.TransportSSE}
}

// connClient makes the requests of one client of the core: a Legacy one
// (its own session.Set, declaring elicitation, log level raised) or a
// Modern one (a keyed session, declaring elicitation).
type connClient struct {
	revision string
	set      *bsession.Set
}

func newConnClient(t *testing.T, mgr *backends.Manager, revision string) *connClient {
	cl := &connClient{revision: revision}
	if revision == upstream.RevisionLegacy {
		cl.set = bsession.New(mgr, func(b *backends.Backend) backends.SessionOptions {
			return backends.SessionOptions{Legacy: true, Client: &mcp.ClientOptions{Capabilities: elicitCaps()},
				Init: func(ctx context.Context, cs *mcp.ClientSession) error { return b.RaiseLogLevel(ctx, cs) }}
		})
		t.Cleanup(func() { _ = cl.set.Close() })
	}
	return cl
}

func elicitCaps() *mcp.ClientCapabilities {
	return &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}}
}

// call is the client's tools/call of tool with args (a JSON object),
// with progress token "p1".
func (cl *connClient) call(tool, args string) *upstream.Request {
	req := &upstream.Request{Method: "tools/call", Name: "b_" + tool, Revision: cl.revision,
		Principal: identity.Principal{Issuer: "iss", Subject: "alice"}, Header: http.Header{},
		Params: json.RawMessage(`{"name":"` + tool + `","arguments":` + args + `}`), Meta: json.RawMessage(`{"progressToken":"p1"}`)}
	if cl.set != nil {
		req.Sessions = cl.set
	} else {
		req.AskCaps = elicitCaps()
	}
	return req
}

// connCase is one TestDoConn case, run for each transport and client.
type connCase struct {
	name string
	run  func(t *testing.T, c *upstream.Core, m *telemetry.Metrics, cl *connClient)
}

// TestDoConn runs requests through Core.Do on stdio and SSE backend
// sessions (the go-sdk connection shared by the connMux), for a Legacy
// client's own session and a Modern client's keyed one.
func TestDoConn(t *testing.T) {
	t.Parallel()
	for _, transport := range []string{config.TransportStdio, config.TransportSSE} {
		for _, rev := range []string{upstream.RevisionLegacy, upstream.RevisionModern} {
			for _, tc := range connCases() {
				t.Run(transport+"/"+rev+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					c, m, mgr := coreOf(t, connBackend(t, transport), 30*time.Second)
					tc.run(t, c, m, newConnClient(t, mgr, rev))
				})
			}
		}
	}
}

func connCases() []connCase {
	return []connCase{
		{name: "logs and progress in order, then the result", run: runReport},
		{name: "ask yielded and answered on the session", run: runAsk},
		{name: "cancellation reaches the backend", run: runCancel},
	}
}

// runReport: the backend's 4 log messages, then 200 progress
// notifications in order, then the result.
func runReport(t *testing.T, c *upstream.Core, m *telemetry.Metrics, cl *connClient) {
	const n = 200
	st, err := c.Do(context.Background(), cl.call("report", fmt.Sprintf(`{"marker":"m","n":%d}`, n)))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	notes, res, err := drain(t, st)
	if err != nil || !strings.Contains(string(res), "reported:m") {
		t.Fatalf("result %s, %v", res, err)
	}
	var logs, prog int
	for _, msg := range notes {
		switch msg.Method {
		case "notifications/message":
			logs++
		case "notifications/progress":
			var p struct{ Progress int }
			if prog++; json.Unmarshal(msg.Params, &p) != nil || p.Progress != prog || logs != 4 {
				t.Fatalf("progress %d after %d logs is %s", prog, logs, msg.Params)
			}
		}
	}
	if logs != 4 || prog != n {
		t.Fatalf("%d logs and %d progress notifications, want 4 and %d", logs, prog, n)
	}
	if got := testutil.ToFloat64(m.BackendRequests.WithLabelValues("b", "tools/call", cl.revision, "ok")); got != 1 {
		t.Fatalf("ok counted %v times", got)
	}
}

// runAsk: the backend's elicitation/create is yielded as an ask; the
// answer goes back on the same connection and the result follows.
func runAsk(t *testing.T, c *upstream.Core, _ *telemetry.Metrics, cl *connClient) {
	st, err := c.Do(context.Background(), cl.call("ask", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ask, err := st.Next(context.Background())
	if err != nil || ask.Kind != upstream.KindAsk || ask.Method != "elicitation/create" {
		t.Fatalf("first message %+v, %v", ask, err)
	}
	if err := st.Answer(context.Background(), ask.ID, json.RawMessage(`{"action":"accept","content":{"name":"ada"}}`), nil); err != nil {
		t.Fatal(err)
	}
	_, res, err := drain(t, st)
	if err != nil || !strings.Contains(string(res), "asked:accept:ada") {
		t.Fatalf("result %s, %v", res, err)
	}
}

// runCancel: closing the Stream of a call in progress tells the backend
// (its handler ends cancelled) and counts the outcome as cancelled.
func runCancel(t *testing.T, c *upstream.Core, m *telemetry.Metrics, cl *connClient) {
	st, err := c.Do(context.Background(), cl.call("wait", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	if msg, err := st.Next(context.Background()); err != nil || msg.Method != "notifications/progress" {
		t.Fatalf("first message %+v, %v", msg, err)
	}
	st.Close()
	st.Wait()
	if got := testutil.ToFloat64(m.BackendRequests.WithLabelValues("b", "tools/call", cl.revision, "cancelled")); got != 1 {
		t.Fatalf("cancelled counted %v times", got)
	}
	st, err = c.Do(context.Background(), cl.call("cancelled", `{"min":1}`))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if _, res, err := drain(t, st); err != nil || !strings.Contains(string(res), `"text":"1"`) {
		t.Fatalf("cancelled calls: %s, %v", res, err)
	}
}

// TestDoConnTimeoutNamesTheBackend: a stdio backend that does not answer
// within its timeout fails the request naming the backend.
func TestDoConnTimeoutNamesTheBackend(t *testing.T) {
	t.Parallel()
	c, m, mgr := coreOf(t, connBackend(t, config.TransportStdio), 300*time.Millisecond)
	cl := newConnClient(t, mgr, upstream.RevisionLegacy)
	st, err := c.Do(context.Background(), cl.call("wait", `{}`))
	if err == nil {
		defer st.Close()
		_, _, err = drain(t, st)
	}
	if err == nil || !strings.Contains(err.Error(), `backend "b": timed out`) {
		t.Fatalf("error %v", err)
	}
	if got := testutil.ToFloat64(m.BackendRequests.WithLabelValues("b", "tools/call", upstream.RevisionLegacy, "error")); got != 1 {
		t.Fatalf("error counted %v times", got)
	}
}

// TestDoConnProgressFloodIsBounded: 5,000 progress notifications of a
// stdio backend reach the consumer in order while at most QueueCapacity
// wait in the Stream (the connection's reader waits on a full one).
func TestDoConnProgressFloodIsBounded(t *testing.T) {
	t.Parallel()
	const n = 5000
	c, _, mgr := coreOf(t, connBackend(t, config.TransportStdio), 30*time.Second)
	cl := newConnClient(t, mgr, upstream.RevisionModern)
	st, err := c.Do(context.Background(), cl.call("report", fmt.Sprintf(`{"marker":"m","n":%d}`, n)))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	notes, _, err := drain(t, st)
	if err != nil {
		t.Fatal(err)
	}
	prog := 0
	for _, msg := range notes {
		if msg.Method == "notifications/progress" {
			var p struct{ Progress int }
			if prog++; json.Unmarshal(msg.Params, &p) != nil || p.Progress != prog {
				t.Fatalf("progress %d is %s", prog, msg.Params)
			}
		}
	}
	if prog != n {
		t.Fatalf("%d progress notifications, want %d", prog, n)
	}
	if hw := c.QueueHighWater(); hw > upstream.QueueCapacity || hw == 0 {
		t.Fatalf("queue high water %d, capacity %d", hw, upstream.QueueCapacity)
	}
}

// TestDoConnAskGoesToTheOldestRequest: with two requests in flight on one
// stdio session, the backend's ask goes to the oldest (nothing on one
// connection tells which request asked); it is answered there, and the
// request that asked gets its result.
func TestDoConnAskGoesToTheOldestRequest(t *testing.T) {
	t.Parallel()
	c, _, mgr := coreOf(t, connBackend(t, config.TransportStdio), 30*time.Second)
	cl := newConnClient(t, mgr, upstream.RevisionLegacy)
	older, err := c.Do(context.Background(), cl.call("wait", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer older.Close()
	if msg, err := older.Next(context.Background()); err != nil || msg.Method != "notifications/progress" {
		t.Fatalf("first message %+v, %v", msg, err)
	}
	req := cl.call("ask", `{}`)
	req.Meta = json.RawMessage(`{"progressToken":"p2"}`)
	asker, err := c.Do(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer asker.Close()
	ask, err := older.Next(context.Background())
	if err != nil || ask.Kind != upstream.KindAsk {
		t.Fatalf("the older request got %+v, %v", ask, err)
	}
	if err := older.Answer(context.Background(), ask.ID, json.RawMessage(`{"action":"accept","content":{"name":"bo"}}`), nil); err != nil {
		t.Fatal(err)
	}
	if _, res, err := drain(t, asker); err != nil || !strings.Contains(string(res), "asked:accept:bo") {
		t.Fatalf("result %s, %v", res, err)
	}
}

// TestDoConnSharedProcessRefusesAsks: on a stdio backend with isolation:
// shared, a Legacy client's request goes on the control connection; its
// result and progress reach it, but the backend's asks and logs, which
// cannot be attributed to one client there, do not: the ask is refused.
func TestDoConnSharedProcessRefusesAsks(t *testing.T) {
	t.Parallel()
	cfg := harness.LegacyStdioBackend(t, "b") // a Legacy control connection, where a backend may ask
	cfg.Isolation = config.IsolationShared
	c, _, mgr := coreOf(t, cfg, 30*time.Second)
	cl := newConnClient(t, mgr, upstream.RevisionLegacy)
	st, err := c.Do(context.Background(), cl.call("report", `{"marker":"m","n":3}`))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	notes, res, err := drain(t, st)
	if err != nil || !strings.Contains(string(res), "reported:m") {
		t.Fatalf("result %s, %v", res, err)
	}
	for _, msg := range notes {
		if msg.Method != "notifications/progress" {
			t.Fatalf("the shared connection handed the request %s", msg.Raw)
		}
	}
	if len(notes) != 3 {
		t.Fatalf("%d progress notifications, want 3", len(notes))
	}
	st, err = c.Do(context.Background(), cl.call("ask", `{}`))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if notes, _, err := drain(t, st); err == nil || !strings.Contains(err.Error(), "isolation: shared") || len(notes) != 0 {
		t.Fatalf("ask on the shared process: %d messages, error %v", len(notes), err)
	}
}

// TestDoConnStalledRequestHoldsTheSessionOnlyWhileItLives: a request
// whose consumer reads nothing stops its connection's reader once its
// queue is full (backpressure, never memory), so a second request on the
// same stdio session waits; once the first ends (here Close; its timeout
// does the same) the second gets its result, not a deadlock.
func TestDoConnStalledRequestHoldsTheSessionOnlyWhileItLives(t *testing.T) {
	t.Parallel()
	c, _, mgr := coreOf(t, connBackend(t, config.TransportStdio), 30*time.Second)
	cl := newConnClient(t, mgr, upstream.RevisionLegacy)
	stalled, err := c.Do(context.Background(), cl.call("report", `{"marker":"a","n":2000}`))
	if err != nil {
		t.Fatal(err)
	}
	req := cl.call("report", `{"marker":"b","n":0}`)
	req.Meta = nil
	second, err := c.Do(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	stalled.Close()
	stalled.Wait()
	if _, res, err := drain(t, second); err != nil || !strings.Contains(string(res), "reported:b") {
		t.Fatalf("second request: %s, %v", res, err)
	}
}
