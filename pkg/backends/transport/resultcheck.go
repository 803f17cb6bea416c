package transport

import (
	"context"
	"io"
	"net/http"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// CheckHTTP wraps a backend session's HTTP client so the answer to each
// POST of a request passes through mcpmsg.AnswerCheck: a response to another id
// fails it (mcpmsg.IDError), a checked method's empty result too (mcpmsg.ResultError).
func CheckHTTP(base *http.Client, backend string) *http.Client {
	return &http.Client{Transport: &checkTransport{base: base.Transport, backend: backend}}
}

type checkTransport struct {
	base    http.RoundTripper
	backend string
}

func (t *checkTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := t.posted(req)
	resp, err := t.base.RoundTrip(req)
	if err != nil || c == nil || resp.StatusCode < 200 || resp.StatusCode >= 300 {
		return resp, err
	}
	return rewriteBody(resp, c.Rewrite)
}

// posted is the check for req when it posts a request (with an id).
func (t *checkTransport) posted(req *http.Request) *mcpmsg.AnswerCheck {
	if req.Method != http.MethodPost || req.GetBody == nil {
		return nil
	}
	body, err := req.GetBody()
	if err != nil {
		return nil
	}
	defer body.Close()
	b, err := io.ReadAll(io.LimitReader(body, MaxResponse))
	if err != nil {
		return nil
	}
	return mcpmsg.NewAnswerCheck(t.backend, b)
}

// checkTransportConn wraps a non-HTTP transport (stdio, SSE) so the
// answers to checked methods read off its connection are checked.
type checkTransportConn struct {
	mcp.Transport
	backend string
}

// CheckConn wraps t, a stdio or SSE transport, so the answers to checked
// methods (mcpmsg.Checked) read off its connections are checked
// (mcpmsg.ResultError, naming backend).
func CheckConn(t mcp.Transport, backend string) mcp.Transport {
	return &checkTransportConn{Transport: t, backend: backend}
}

func (t *checkTransportConn) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &checkConn{Connection: c, backend: t.backend, sent: map[jsonrpc.ID]sentRequest{}}, nil
}

// checkConn remembers the method of each checked request it writes until
// its answer is read or its context ends (a cancelled call gets none).
type checkConn struct {
	mcp.Connection
	backend string
	mu      sync.Mutex
	sent    map[jsonrpc.ID]sentRequest
}

type sentRequest struct {
	method string
	stop   func() bool // the context's AfterFunc
}

func (c *checkConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	if r, ok := msg.(*jsonrpc.Request); ok && r.IsCall() && mcpmsg.Checked(r.Method) {
		c.mu.Lock()
		c.sent[r.ID] = sentRequest{method: r.Method, stop: context.AfterFunc(ctx, func() { c.take(r.ID) })}
		c.mu.Unlock()
	}
	return c.Connection.Write(ctx, msg)
}

// take forgets request id and returns its method ("" for none).
func (c *checkConn) take(id jsonrpc.ID) string {
	c.mu.Lock()
	s, ok := c.sent[id]
	delete(c.sent, id)
	c.mu.Unlock()
	if ok {
		s.stop()
	}
	return s.method
}

func (c *checkConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Response); ok && err == nil {
		if method := c.take(r.ID); method != "" && r.Error == nil {
			if rerr := mcpmsg.ResultError(c.backend, method, r.Result); rerr != nil {
				r.Result, r.Error = nil, rerr
			}
		}
	}
	return msg, err
}
