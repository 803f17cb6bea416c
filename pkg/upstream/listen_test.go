package upstream_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/wire"
)

// listenBackend is a Modern HTTP backend whose subscriptions/listen POSTs
// asking prompt changes (the tests') answer answers with (the request
// decoded); everything else is a go-sdk stateless server's.
func listenBackend(t *testing.T, answer func(w http.ResponseWriter, m *wire.Message)) string {
	t.Helper()
	srv := mcp.NewServer(&mcp.Implementation{Name: "b", Version: "test"}, nil)
	srv.AddTool(&mcp.Tool{Name: "t", InputSchema: map[string]any{"type": "object"}},
		func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return &mcp.CallToolResult{}, nil
		})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{Stateless: true})
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Method") == "subscriptions/listen" {
			data, _ := io.ReadAll(r.Body)
			if !bytes.Contains(data, []byte(`"promptsListChanged":true`)) {
				<-r.Context().Done() // the manager's own listen (tools): held open, answered nothing
				return
			}
			var m wire.Message
			_ = wire.Decode(bytes.Clone(data), &m)
			answer(w, &m)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	return hs.URL
}

// TestListenStreamGatheredAnEventOfAnySize: a listen stream's reader
// bounded each line but not an event of many data lines, which it gathered
// whole; such an event over the listen's limit (1 MiB) now fails the
// stream with an error naming the limit, before its reader sees it.
func TestListenStreamGatheredAnEventOfAnySize(t *testing.T) {
	t.Parallel()
	url := listenBackend(t, func(w http.ResponseWriter, _ *wire.Message) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		line := "data: " + strings.Repeat("x", 1000) + "\n"
		_, _ = io.WriteString(w, "event: message\n"+strings.Repeat(line, 1<<20/len(line)+1)+"\n")
	})
	c, _, mgr := core(t, url, 30*time.Second)
	b, err := mgr.Backend("b")
	require.NoError(t, err)
	ns, err := c.Listen(context.Background(), b, mcp.NotificationSubscriptions{PromptsListChanged: true})
	require.NoError(t, err)
	defer ns.Close()
	_, _, err = ns.Next(context.Background())
	require.ErrorIs(t, err, wire.ErrEventTooLarge)
	require.ErrorContains(t, err, strconv.Itoa(1<<20))
}

// A listen's notifications reach its reader in order through the core;
// the backend's response ends it (backends.ErrListenEnded), and the
// request carried the listen's params and a Modern _meta.
func TestListenYieldsNotificationsThenEnds(t *testing.T) {
	t.Parallel()
	got := make(chan *wire.Message, 1)
	url := listenBackend(t, func(w http.ResponseWriter, m *wire.Message) {
		got <- m
		writeSSE(w, wire.Notification("notifications/subscriptions/acknowledged", []byte(`{"notifications":{"promptsListChanged":true}}`)),
			wire.Notification("notifications/tools/list_changed", nil),
			wire.Response(m.ID, []byte(`{}`)))
	})
	c, _, mgr := core(t, url, 30*time.Second)
	b, err := mgr.Backend("b")
	require.NoError(t, err)
	ns, err := c.Listen(context.Background(), b, mcp.NotificationSubscriptions{PromptsListChanged: true})
	require.NoError(t, err)
	defer ns.Close()
	var methods []string
	for {
		method, _, err := ns.Next(context.Background())
		if err != nil {
			require.ErrorIs(t, err, backends.ErrListenEnded)
			break
		}
		methods = append(methods, method)
	}
	require.Equal(t, []string{"notifications/subscriptions/acknowledged", "notifications/tools/list_changed"}, methods)
	m := <-got
	require.Contains(t, string(m.Params), `"promptsListChanged":true`)
	require.Contains(t, string(m.Params), `"io.modelcontextprotocol/protocolVersion"`)
}
