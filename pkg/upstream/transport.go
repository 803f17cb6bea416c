package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// session is a backend session Do sends on, whatever the transport:
// httpSession (streamable HTTP: a RawSession's POSTs) or connSession
// (stdio, SSE: raw messages on the go-sdk connection, shared with the
// go-sdk client by backends' connMux). Both give the request's messages
// as an exchange, so one reader serves both.
type session interface {
	ID() string   // the backend's Mcp-Session-Id ("" for none)
	Modern() bool // a Modern revision: _meta per request, input_required, no asks
	RequestMeta(meta, caps json.RawMessage, logLevel string) (json.RawMessage, error)
	// send sends the request body (routed to t) and returns its
	// exchange; ctx ends the exchange.
	send(ctx context.Context, req *Request, t Target, body []byte) (exchange, error)
	// Notify sends a notification or an answer on the session.
	Notify(ctx context.Context, body []byte) error
	// notifies reports whether a cancellation is told with
	// notifications/cancelled (else closing the request's stream tells it).
	notifies() bool
}

// exchange yields one request's messages from its backend, the response
// last; each message is the caller's.
type exchange interface {
	Next() ([]byte, error)
	// Close ends the exchange; drain (the response was read) lets an HTTP
	// response stream finish so its connection is reused.
	Close(drain bool)
}

// httpSession is a streamable HTTP backend session.
type httpSession struct{ *backends.RawSession }

func (h httpSession) send(ctx context.Context, req *Request, t Target, body []byte) (exchange, error) {
	var params map[string]string // a Modern tool's Mcp-Param-* headers
	if req.Method == "tools/call" && t.Tool != nil && mcpmsg.HeaderParams(t.Tool) {
		params = wire.ParamHeaders(mcpmsg.SchemaMap(t.Tool.InputSchema), req.Params)
	}
	resp, err := h.Call(ctx, req.Header, req.Method, t.Name, params, body)
	if err != nil {
		return nil, err
	}
	return newHTTPExchange(resp)
}

func (h httpSession) notifies() bool { return !h.Modern() }

// connSession is a stdio or SSE backend session.
type connSession struct{ *backends.ConnSession }

func (c connSession) ID() string { return "" }

func (c connSession) send(ctx context.Context, req *Request, _ Target, body []byte) (exchange, error) {
	tok, _ := mcpmsg.TokenOf(orEmpty(req.Meta)) // "": progress goes to no request
	ex, err := c.Start(ctx, tok, body)
	if err != nil {
		return nil, err
	}
	return connExchange{ex}, nil
}

func (c connSession) notifies() bool { return true } // stdio and SSE have no stream per request

type connExchange struct{ *backends.Exchange }

func (c connExchange) Close(bool) { c.Exchange.Close() }

// newHTTPExchange reads resp, a JSON body or an SSE stream.
func newHTTPExchange(resp *http.Response) (exchange, error) {
	switch ct := wire.MediaType(resp.Header.Get("Content-Type")); ct {
	case wire.MediaJSON:
		return &jsonExchange{body: resp.Body}, nil
	case wire.MediaSSE:
		return &sseExchange{body: resp.Body, er: wire.NewEventReader(resp.Body)}, nil
	default:
		resp.Body.Close()
		return nil, fmt.Errorf("unsupported content type %q (HTTP %d)", ct, resp.StatusCode)
	}
}

// jsonExchange is a JSON response body: one message, the response.
type jsonExchange struct {
	body io.ReadCloser
	read bool
}

func (j *jsonExchange) Next() ([]byte, error) {
	if j.read {
		return nil, errors.New("JSON response is not a response")
	}
	j.read = true
	defer j.body.Close()
	data, err := io.ReadAll(io.LimitReader(j.body, wire.MaxEvent+1))
	if err != nil {
		return nil, err
	}
	if len(data) > wire.MaxEvent {
		return nil, fmt.Errorf("response exceeds %d bytes", wire.MaxEvent)
	}
	return data, nil
}

func (j *jsonExchange) Close(bool) { j.body.Close() }

// sseExchange is an SSE response stream, one message per event.
type sseExchange struct {
	body io.ReadCloser
	er   *wire.EventReader
}

func (s *sseExchange) Next() ([]byte, error) {
	data, err := s.er.Next()
	if errors.Is(err, io.EOF) {
		return nil, errors.New("SSE stream ended without a response")
	}
	if err != nil {
		return nil, err
	}
	return bytes.Clone(data), nil // the reader's buffer is reused
}

// Close drains what follows the response (drain) so the connection is
// reused, else closes the stream.
func (s *sseExchange) Close(drain bool) {
	ended := s.er.Ended()
	s.er.Release()
	if drain && !ended {
		backends.DrainNow(s.body)
		return
	}
	s.body.Close()
}
