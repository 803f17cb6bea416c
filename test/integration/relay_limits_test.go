package integration

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// addFloodTool: asks the client 20 elicitations at once and returns once
// 4 of them were refused, naming how many were.
func addFloodTool(s *mcp.Server, name string) {
	s.AddTool(&mcp.Tool{Name: name, InputSchema: flowSchema}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		refused := make(chan error, 20)
		for i := range 20 {
			go func() {
				_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: fmt.Sprint("q", i), RequestedSchema: answerSchema})
				refused <- err
			}()
		}
		n := 0
		for err := range refused {
			if err != nil {
				n++
			}
			if n == 4 {
				break
			}
		}
		return flowResult("refused:%d", n), nil
	})
}

// Without the ask limit, one relayed call could hold any number of
// server-to-client requests waiting on the client: the 17th and later are
// refused to the backend at once, while the first 16 reach the client.
func TestRelayedCallMayHaveAtMost16AsksWaitingOnTheClient(t *testing.T) {
	b, _, _ := raBackend(t, "f", nil, func(s *mcp.Server) { addFloodTool(s, "flood") })
	v := raVMCP(t, nil, []string{"f_flood"}, b)
	c := raConnect(t, v, `{"elicitation":{}}`)
	call := c.start(raCallBody(`1`, "f_flood", raMarker("flood")))
	require.Equal(t, http.StatusOK, <-call.status)
	asks := 0
	for {
		m := call.next(t, "flood call")
		switch m.Method {
		case "elicitation/create":
			asks++
			continue
		case "notifications/cancelled": // asks withdrawn once the tool returned
			continue
		}
		require.Equal(t, "", m.Method, "only asks, their cancellations and the response: %s", m.raw)
		require.Equal(t, "refused:4", m.text())
		break
	}
	require.Equal(t, 16, asks, "the client saw exactly the asks within the limit")
}

// Without the DNS-rebinding guard (pkg/edge, in front of the relay), a
// relayed call naming a foreign Host on a loopback listener was served
// (the go-sdk handler, which the relay runs before, refuses it): a page on
// evil.example resolving to 127.0.0.1 could call tools.
func TestRelayedCallWithAForeignHostOnLoopbackIsRefused(t *testing.T) {
	b, _, _ := raBackend(t, "h", nil, nil)
	v := raVMCP(t, nil, []string{"h_echo"}, b)
	c := raConnect(t, v, `{}`)
	req := c.request(flowCtx(t), c.sid, raCallBody(`1`, "h_echo", `,"arguments":{"text":"x"}`))
	req.Host = "evil.example"
	resp, err := c.hc.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusForbidden, resp.StatusCode)
	status, msgs := c.post(t, raCallBody(`2`, "h_echo", `,"arguments":{"text":"y"}`))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "h/echo:y", msgs[0].text(), "the loopback Host still works")
}

// cutOnce is a backend handler that drops the TCP connection of the first
// POST whose body mentions "cut" (a transport failure, not an HTTP error)
// and counts initialize requests.
type cutOnce struct {
	next  http.Handler
	mu    sync.Mutex
	cut   bool
	inits int
}

func (c *cutOnce) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	c.mu.Lock()
	if bytes.Contains(body, []byte(`"initialize"`)) {
		c.inits++
	}
	drop := !c.cut && bytes.Contains(body, []byte(`cut`))
	c.cut = c.cut || drop
	c.mu.Unlock()
	if drop {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			conn.Close()
		}
		return
	}
	c.next.ServeHTTP(w, r)
}

func (c *cutOnce) initializes() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inits
}

// Without the broken-session flag, a relayed call whose POST failed below
// HTTP left its backend session in use; the next call now opens a new one.
func TestRelayedCallAfterATransportFailureUsesANewBackendSession(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "cut", Version: "test"}, nil)
	echoTool(srv, "cut", "echo")
	h := &cutOnce{next: mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)}
	hs := httptest.NewServer(h)
	t.Cleanup(hs.Close)
	v := harness.StartVMCP(t, nil, config.Backend{Name: "cut", URL: hs.URL, Transport: config.TransportStreamableHTTP})
	awaitTools(t, v, "cut_echo")
	c := raConnect(t, v, `{}`)
	status, msgs := c.post(t, raCallBody(`1`, "cut_echo", `,"arguments":{"text":"warm"}`))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "cut/echo:warm", msgs[0].text())
	before := h.initializes()

	_, msgs = c.post(t, raCallBody(`2`, "cut_echo", `,"arguments":{"text":"cut"}`))
	require.Len(t, msgs, 1)
	require.NotZero(t, msgs[0].errorCode(), "the cut call fails: %s", msgs[0].raw)
	status, msgs = c.post(t, raCallBody(`3`, "cut_echo", `,"arguments":{"text":"after"}`))
	require.Equal(t, http.StatusOK, status)
	require.Equal(t, "cut/echo:after", msgs[0].text())
	require.Equal(t, before+1, h.initializes(), "the next call opened a new backend session")
}
