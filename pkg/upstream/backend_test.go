package upstream_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// script answers one tools/call POST of the in-memory backend: m is the
// decoded request, n counts the tools/calls so far (1 for the first).
type script func(w http.ResponseWriter, r *http.Request, m *wire.Message, n int)

// scripted is an in-memory backend: a go-sdk server (stateful: Legacy
// sessions; stateless: Modern) for the lifecycle and lists, whose
// tools/call POSTs a script answers as raw streamable HTTP.
type scripted struct {
	URL     string
	script  script
	calls   int
	mu      sync.Mutex
	posted  chan *wire.Message // every other POSTed message without a method handled by the go-sdk (answers) or cancellations
	session []string           // the Mcp-Session-Id of each tools/call
}

func startScripted(t *testing.T, modern bool, s script) *scripted {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "b", Version: "test"}, nil)
	srv.AddTool(&mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: modern})
	sb := &scripted{script: s, posted: make(chan *wire.Message, 64)}
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			h.ServeHTTP(w, r)
			return
		}
		data, _ := io.ReadAll(r.Body)
		var m wire.Message
		_ = wire.Decode(bytes.Clone(data), &m)
		switch {
		case m.Method == "tools/call":
			sb.mu.Lock()
			sb.calls++
			n := sb.calls
			sb.session = append(sb.session, r.Header.Get("Mcp-Session-Id"))
			sb.mu.Unlock()
			sb.script(w, r, &m, n)
			return
		case m.Method == "" || m.Method == "notifications/cancelled":
			sb.posted <- &m
			w.WriteHeader(http.StatusAccepted)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(data))
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	sb.URL = hs.URL
	return sb
}

func (sb *scripted) sessions() []string {
	sb.mu.Lock()
	defer sb.mu.Unlock()
	return append([]string(nil), sb.session...)
}

// core is a call core over the one backend "b" at url.
func core(t *testing.T, url string, timeout time.Duration) (*upstream.Core, *telemetry.Metrics, *backends.Manager) {
	t.Helper()
	return coreOf(t, config.Backend{Name: "b", URL: url, Transport: config.TransportStreamableHTTP}, timeout)
}

// coreOf is a call core over the one backend cfg (named "b").
func coreOf(t *testing.T, cfg config.Backend, timeout time.Duration) (*upstream.Core, *telemetry.Metrics, *backends.Manager) {
	t.Helper()
	agg := aggregator.New(aggregator.Policy{}, slog.New(slog.DiscardHandler))
	cfg.Timeout = config.Duration(timeout)
	m := telemetry.New()
	mgr := backends.NewManager([]config.Backend{cfg}, agg, slog.New(slog.DiscardHandler), "test", backends.WithMetrics(m))
	mgr.Start(30 * time.Second)
	t.Cleanup(mgr.Close)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := mgr.WaitReady(ctx); err != nil {
		t.Fatalf("backend not ready: %v", err)
	}
	c := upstream.New(agg, mgr, m)
	c.SetLogger(slog.New(slog.DiscardHandler))
	t.Cleanup(c.Close)
	return c, m, mgr
}

// call is a Modern client's tools/call of "t" for principal sub.
func call(sub string) *upstream.Request {
	return &upstream.Request{Method: "tools/call", Name: "b_t", Revision: upstream.RevisionModern,
		Principal: identity.Principal{Issuer: "iss", Subject: sub}, Header: http.Header{},
		Params: json.RawMessage(`{"name":"t","arguments":{}}`), Meta: json.RawMessage(`{"progressToken":"p1"}`)}
}

// writeSSE writes msgs as one SSE event each, flushed.
func writeSSE(w http.ResponseWriter, msgs ...[]byte) {
	if w.Header().Get("Content-Type") == "" {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
	}
	for _, m := range msgs {
		_, _ = w.Write(wire.AppendEvent(nil, mcp.Event{Name: "message", Data: m}))
	}
	w.(http.Flusher).Flush()
}

func progress(tok string, n int) []byte {
	return wire.Notification("notifications/progress", fmt.Appendf(nil, `{"progressToken":%q,"progress":%d}`, tok, n))
}

var okResult = json.RawMessage(`{"content":[{"type":"text","text":"ok"}]}`)

// drain reads st to its end: the notifications and the result or error.
func drain(t *testing.T, st *upstream.Stream) (notes []upstream.Message, res json.RawMessage, err error) {
	t.Helper()
	for {
		m, err := st.Next(context.Background())
		if err != nil {
			return notes, nil, err
		}
		if m.Kind == upstream.KindResult {
			return notes, m.Result, nil
		}
		notes = append(notes, m)
	}
}

func outcome(m *telemetry.Metrics, o string) float64 {
	return testutil.ToFloat64(m.BackendRequests.WithLabelValues("b", "tools/call", upstream.RevisionModern, o))
}
