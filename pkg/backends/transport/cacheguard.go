package transport

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// GuardHTTP wraps an HTTP client so JSON and SSE response bodies pass
// through mcpmsg.GuardMessage.
func GuardHTTP(base *http.Client) *http.Client {
	return &http.Client{Transport: &guardTransport{base: base.Transport}}
}

type guardTransport struct{ base http.RoundTripper }

func (t *guardTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	return rewriteBody(resp, mcpmsg.GuardMessage)
}

// rewriteBody makes resp's JSON body, or each event of its SSE body, pass
// through rewrite (which returns a message and whether it changed it).
func rewriteBody(resp *http.Response, rewrite func([]byte) ([]byte, bool)) (*http.Response, error) {
	ct := wire.MediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case wire.MediaJSON:
		b, err := io.ReadAll(io.LimitReader(resp.Body, MaxResponse+1))
		if err != nil {
			resp.Body.Close()
			return nil, err
		}
		if len(b) > MaxResponse { // too long to rewrite: passed on whole
			resp.Body = struct {
				io.Reader
				io.Closer
			}{io.MultiReader(bytes.NewReader(b), resp.Body), resp.Body}
			return resp, nil
		}
		resp.Body.Close()
		if out, changed := rewrite(b); changed {
			b = out
			resp.ContentLength = int64(len(b))
			resp.Header.Set("Content-Length", strconv.Itoa(len(b)))
		}
		resp.Body = io.NopCloser(bytes.NewReader(b))
	case wire.MediaSSE:
		resp.Body = &guardBody{src: wire.NewEventReader(resp.Body), body: resp.Body, rewrite: rewrite}
	}
	return resp, nil
}

// guardBody passes an SSE stream through one event at a time (read with
// wire.EventReader, so an event over wire.MaxEvent fails the stream),
// rewriting the data of events that rewrite changes.
type guardBody struct {
	src     *wire.EventReader
	body    io.Closer
	rewrite func([]byte) ([]byte, bool)
	pending []byte
	out     []byte
	err     error
}

func (b *guardBody) Read(p []byte) (int, error) {
	for len(b.pending) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		b.pending = b.readEvent()
	}
	n := copy(p, b.pending)
	b.pending = b.pending[n:]
	return n, nil
}

// readEvent reads one SSE event and returns it as it is to be passed on:
// its fields, and its data rewritten if needed (comments are dropped); an
// event cut short by the stream's end fails it instead.
func (b *guardBody) readEvent() []byte {
	ev, err := b.src.Event()
	if err == nil && b.src.Cut() { // not passed on whole: the reader may resume
		err = io.ErrUnexpectedEOF
	}
	if err != nil {
		b.err = err
		return nil
	}
	if out, changed := b.rewrite(ev.Data); changed {
		ev.Data = out
	}
	b.out = wire.AppendEvent(b.out[:0], ev)
	return b.out
}

func (b *guardBody) Close() error { return b.body.Close() }

// guardTransportConn wraps a non-HTTP transport so responses read off its
// connection pass through mcpmsg.GuardResult.
type guardTransportConn struct{ mcp.Transport }

// GuardConn wraps t, a stdio or SSE transport, so results read off its
// connections have a non-zero ttlMs zeroed (mcpmsg.GuardResult).
func GuardConn(t mcp.Transport) mcp.Transport { return &guardTransportConn{Transport: t} }

func (t *guardTransportConn) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &guardConn{Connection: c}, nil
}

type guardConn struct{ mcp.Connection }

func (c *guardConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	msg, err := c.Connection.Read(ctx)
	if r, ok := msg.(*jsonrpc.Response); ok && err == nil && r.Result != nil {
		r.Result, _ = mcpmsg.GuardResult(r.Result)
	}
	return msg, err
}
