package integration

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/go-logr/logr"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/vmcp"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// restartable is a Legacy (stateful) go-sdk backend whose restart keeps
// its address but forgets every session: a new server and handler, the
// old sessions closed, so a request on an old session gets 404.
type restartable struct {
	name string
	hs   *httptest.Server
	cur  atomic.Pointer[mcp.Server]
	h    atomic.Pointer[mcp.StreamableHTTPHandler]
}

func startRestartable(t *testing.T, name string) *restartable {
	rb := &restartable{name: name}
	rb.restart()
	rb.hs = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { rb.h.Load().ServeHTTP(w, r) }))
	t.Cleanup(rb.hs.Close)
	return rb
}

// restart replaces the server: its sessions are forgotten.
func (rb *restartable) restart() {
	srv := mcp.NewServer(&mcp.Implementation{Name: rb.name, Version: "test"}, nil)
	echoTool(srv, rb.name, "echo")
	old := rb.cur.Swap(srv)
	rb.h.Store(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	if old != nil { // connections stay open (keep-alive), as behind a proxy
		for ss := range old.Sessions() {
			_ = ss.Close()
		}
	}
}

func (rb *restartable) config() config.Backend {
	return config.Backend{Name: rb.name, URL: rb.hs.URL, Transport: config.TransportStreamableHTTP}
}

// TestModernCallAfterBackendRestartSessionNotFound pins issue 13's
// restart failure: after a Legacy backend restarted (its sessions
// forgotten), a Modern client's first call failed with "session not
// found" where a Legacy call is retried on a new session. Both Modern
// transports retry once on a new session: the shared control connection
// (a client without capabilities) and a pooled parked session (a client
// that declared elicitation).
func TestModernCallAfterBackendRestartSessionNotFound(t *testing.T) {
	rb := startRestartable(t, "rb")
	logs := &logBuffer{}
	v := harness.StartVMCPWithOptions(t, vmcp.Options{Logger: logr.FromSlogHandler(slog.NewTextHandler(logs, nil))}, nil, rb.config())
	t.Cleanup(func() {
		if t.Failed() {
			t.Log(logs.String())
		}
	})
	awaitTools(t, v, "rb_echo")
	plain := v.Connect(t, "", nil)
	asking := v.Connect(t, "", &mcp.ClientOptions{ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
		return &mcp.ElicitResult{Action: "decline"}, nil
	}})
	legacyClient := v.Connect(t, legacy, nil)
	for _, cs := range []*mcp.ClientSession{plain, asking, legacyClient} {
		require.Equal(t, "rb/echo:before", callText(t, cs, "rb_echo", "before"))
	}
	rb.restart()
	for i, name := range []string{"shared", "parked", "legacy"} {
		cs := []*mcp.ClientSession{plain, asking, legacyClient}[i]
		res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "rb_echo", Arguments: map[string]any{"text": "after"}})
		if assert.NoError(t, err, "the %s call after the restart", name) {
			assert.Equal(t, "rb/echo:after", harness.Text(t, res), "the %s call after the restart", name)
		}
	}
}
