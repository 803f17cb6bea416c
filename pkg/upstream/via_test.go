package upstream_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/test/integration/harness/servertools"
)

// viaCase is one request of the transport rule's table: who sends which
// method to which kind of backend, and the transport Pin chooses.
type viaCase struct {
	revision string
	method   string
	alice    bool // the request has a principal (else anonymous: auth off)
	asks     bool // the client declared a capability a backend can ask for
	header   bool // tools/call of a tool with an x-mcp-header param
	want     upstream.Via
}

// TestTransportRule pins the transport rule (choose) for each kind of
// backend: every request of a Modern client to a Modern HTTP backend is
// direct (a header tool's, a get's, a read's, a completion's too: before,
// they took the control connection, which a per-principal backend lacks);
// a Legacy HTTP backend is always keyed for a Modern client (an anonymous
// completion too); a stdio or SSE backend takes the control connection
// only for an anonymous client that cannot be asked. A Legacy client's
// requests go on its own sessions.
func TestTransportRule(t *testing.T) {
	t.Parallel()
	for kind, k := range viaKinds() {
		t.Run(kind, func(t *testing.T) {
			t.Parallel()
			runVia(t, k.cfg(t), k.cases)
		})
	}
}

// viaKind is a kind of backend of the transport rule's table, with its
// cases.
type viaKind struct {
	cfg   func(t *testing.T) config.Backend
	cases []viaCase
}

func viaKinds() map[string]viaKind {
	ok := func(w http.ResponseWriter, _ *http.Request, m *wire.Message, _ int) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(wire.Response(m.ID, okResult))
	}
	m, l := upstream.RevisionModern, upstream.RevisionLegacy
	return map[string]viaKind{
		"Modern HTTP": {cfg: func(t *testing.T) config.Backend {
			return config.Backend{Name: "b", URL: startScripted(t, true, ok).URL, Transport: config.TransportStreamableHTTP}
		}, cases: []viaCase{
			{revision: m, method: "tools/call", want: upstream.ViaDirect},
			{revision: m, method: "tools/call", header: true, want: upstream.ViaDirect},
			{revision: m, method: "tools/call", header: true, alice: true, asks: true, want: upstream.ViaDirect},
			{revision: m, method: "prompts/get", want: upstream.ViaDirect},
			{revision: m, method: "resources/read", alice: true, want: upstream.ViaDirect},
			{revision: m, method: "completion/complete", want: upstream.ViaDirect},
			{revision: m, method: "completion/complete", alice: true, want: upstream.ViaDirect},
			{revision: l, method: "tools/call", header: true, want: upstream.ViaRelay},
			{revision: l, method: "completion/complete", want: upstream.ViaRelay},
		}},
		"Legacy HTTP": {cfg: func(t *testing.T) config.Backend {
			return config.Backend{Name: "b", URL: startScripted(t, false, ok).URL, Transport: config.TransportStreamableHTTP}
		}, cases: []viaCase{
			{revision: m, method: "tools/call", want: upstream.ViaKeyed},
			{revision: m, method: "prompts/get", want: upstream.ViaKeyed},
			{revision: m, method: "completion/complete", want: upstream.ViaKeyed},
			{revision: m, method: "completion/complete", alice: true, want: upstream.ViaKeyed},
			{revision: l, method: "resources/read", want: upstream.ViaRelay},
		}},
		"SSE": {cfg: func(t *testing.T) config.Backend { return connBackend(t, config.TransportSSE) }, cases: []viaCase{
			{revision: m, method: "tools/call", want: upstream.ViaShared},
			{revision: m, method: "prompts/get", want: upstream.ViaShared},
			{revision: m, method: "tools/call", asks: true, want: upstream.ViaKeyed},
			{revision: m, method: "resources/read", alice: true, want: upstream.ViaKeyed},
			{revision: m, method: "completion/complete", want: upstream.ViaShared},
			{revision: m, method: "completion/complete", asks: true, want: upstream.ViaShared},
			{revision: m, method: "completion/complete", alice: true, want: upstream.ViaKeyed},
			{revision: l, method: "tools/call", want: upstream.ViaRelay},
			{revision: l, method: "completion/complete", want: upstream.ViaRelay},
			{revision: l, method: "resources/subscribe", want: upstream.ViaSession},
		}},
	}
}

// runVia checks each case's transport on a core over cfg.
func runVia(t *testing.T, cfg config.Backend, cases []viaCase) {
	c, _, _ := coreOf(t, cfg, 30*time.Second)
	header := &mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"}}}}
	for _, tc := range cases {
		req := &upstream.Request{Method: tc.method, Revision: tc.revision, Header: http.Header{}, Asks: tc.asks}
		if tc.alice {
			req.Principal = identity.Principal{Issuer: "iss", Subject: "alice"}
		}
		var tool *mcp.Tool
		if tc.header {
			tool = header
		}
		got, err := c.Pin(req, "b", "t", tool)
		if err != nil {
			t.Fatal(err)
		}
		if got.Via != tc.want {
			t.Errorf("%s client, %s (principal %v, asks %v, header tool %v): %s, want %s", tc.revision, tc.method, tc.alice, tc.asks, tc.header, got.Via, tc.want)
		}
	}
}

// TestDoSharedOnTheControlConnection: an anonymous Modern client's call
// to an SSE backend, routed shared, goes through Do on the backend's
// control connection (the backend serves no other session) and gets,
// alone in flight, the backend's logs and progress (by its token) before
// the result.
func TestDoSharedOnTheControlConnection(t *testing.T) {
	t.Parallel()
	srv := mcp.NewServer(&mcp.Implementation{Name: "b", Version: "test"}, nil)
	servertools.Add(srv)
	hs := httptest.NewServer(mcp.NewSSEHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(func() { hs.CloseClientConnections(); hs.Close() })
	c, _, _ := coreOf(t, config.Backend{Name: "b", URL: hs.URL, Transport: config.TransportSSE}, 30*time.Second)
	req := &upstream.Request{Method: "tools/call", Name: "b_report", Revision: upstream.RevisionModern, Header: http.Header{},
		Params: json.RawMessage(`{"name":"report","arguments":{"marker":"m","n":3}}`), Meta: json.RawMessage(`{"progressToken":"p1"}`)}
	tgt, err := c.Pin(req, "b", "report", nil)
	if err != nil || tgt.Via != upstream.ViaShared {
		t.Fatalf("routed %s, %v; want shared", tgt.Via, err)
	}
	req.Target = &tgt
	st, err := c.Do(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	notes, res, err := drain(t, st)
	if err != nil || !strings.Contains(string(res), "reported:m") {
		t.Fatalf("result %s, %v", res, err)
	}
	var logs, prog int
	for _, n := range notes {
		switch n.Method {
		case "notifications/message":
			logs++
		case "notifications/progress":
			prog++
		}
	}
	if logs != 4 || prog != 3 {
		t.Fatalf("%d logs and %d progress notifications, want 4 and 3", logs, prog)
	}
	sessions := 0
	for range srv.Sessions() {
		sessions++
	}
	if sessions != 1 {
		t.Fatalf("the backend serves %d sessions, want 1: the control connection", sessions)
	}
}
