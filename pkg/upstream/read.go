package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/wire"
)

// cancelFlush bounds posting notifications/cancelled to a Legacy session.
const cancelFlush = 2 * time.Second

// read is the Stream's reader goroutine: it reads the backend's response
// (a JSON body or an SSE stream) message by message into the queue, then
// counts the outcome, queues the result or error last, and drains what
// follows the response so its connection is reused. It ends with the
// response, or when the request is cancelled.
func (s *Stream) read(resp *http.Response) {
	defer close(s.ended)
	res, rest, err := s.readResponse(resp)
	if err != nil && s.httpCtx.Err() != nil {
		err = s.cancelled(err)
	}
	s.over.Store(true)
	err = s.done(err)
	last := item{msg: Message{Kind: KindResult, Result: res}, err: err}
	if !s.push(last) {
		select { // cancelled: still queued where there is room
		case s.q <- last:
		default:
		}
	}
	close(s.q)
	if rest != nil {
		backends.DrainNow(rest)
	}
	s.stop(nil)
}

// cancelled is the error of a request cancelled before its end (the
// client left, the timeout, Close), after telling a Legacy session's
// backend (notifications/cancelled; a Modern one saw its stream close).
func (s *Stream) cancelled(err error) error {
	cause := context.Cause(s.httpCtx)
	if !s.raw.Modern() {
		reason := "cancelled"
		if cause != nil {
			reason = cause.Error()
		}
		ctx, cancel := context.WithTimeout(context.Background(), cancelFlush)
		if nerr := s.raw.Notify(ctx, wire.Cancelled(s.id, reason)); nerr != nil {
			s.core.undeliverable("notifications/cancelled", s.backend, nerr)
		}
		cancel()
	}
	switch {
	case errors.Is(cause, context.DeadlineExceeded):
		return context.DeadlineExceeded
	case errors.Is(cause, errAbandoned):
		return ClientEnded(cause)
	case cause != nil:
		return cause
	}
	return err
}

// readResponse reads resp to the response to s.id; rest is the body still
// to drain (nil: closed). Notifications and asks before it are queued.
func (s *Stream) readResponse(resp *http.Response) (res json.RawMessage, rest io.ReadCloser, err error) {
	ct := wire.MediaType(resp.Header.Get("Content-Type"))
	switch ct {
	case wire.MediaJSON:
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, wire.MaxEvent+1))
		if err != nil {
			return nil, nil, err
		}
		if len(data) > wire.MaxEvent {
			return nil, nil, fmt.Errorf("response exceeds %d bytes", wire.MaxEvent)
		}
		res, final, err := s.onMessage(data)
		if !final && err == nil {
			err = errors.New("JSON response is not a response")
		}
		return res, nil, err
	case wire.MediaSSE:
		return s.readSSE(resp.Body)
	}
	resp.Body.Close()
	return nil, nil, fmt.Errorf("unsupported content type %q (HTTP %d)", ct, resp.StatusCode)
}

// readSSE reads an SSE response stream to the response.
func (s *Stream) readSSE(body io.ReadCloser) (json.RawMessage, io.ReadCloser, error) {
	er := wire.NewEventReader(body)
	defer er.Release() // each event is copied: its message outlives the read
	for {
		data, err := er.Next()
		if err != nil {
			body.Close()
			if errors.Is(err, io.EOF) {
				err = errors.New("SSE stream ended without a response")
			}
			return nil, nil, err
		}
		res, final, err := s.onMessage(bytes.Clone(data))
		switch {
		case final && er.Ended():
			body.Close()
			return res, nil, err
		case final:
			return res, body, err
		case err != nil:
			body.Close()
			return nil, nil, err
		}
	}
}

// onMessage handles one message of the backend (data is its own): the
// response to s.id is final; a response to any other id fails the request
// at once; notifications and asks are queued (err: the request was
// cancelled while the queue was full).
func (s *Stream) onMessage(data []byte) (res json.RawMessage, final bool, err error) {
	var m wire.Message
	if err := wire.Decode(data, &m); err != nil {
		return nil, true, fmt.Errorf("malformed JSON-RPC message: %w", err)
	}
	if m.Method == "" {
		res, err := s.response(&m)
		return res, true, err
	}
	msg := Message{Kind: KindNotification, Method: m.Method, Params: m.Params, Raw: data}
	if len(m.ID) > 0 && string(m.ID) != "null" {
		msg.Kind, msg.ID = KindAsk, m.ID
		s.asked()
	}
	if !s.push(item{msg: msg}) {
		return nil, false, context.Cause(s.httpCtx)
	}
	return nil, false, nil
}

// response is the result of the response m, which must answer s.id: a
// backend's JSON-RPC error, or a result that is an object (absent, null or
// not an object is an error, never an empty success).
func (s *Stream) response(m *wire.Message) (json.RawMessage, error) {
	if !bytes.Equal(bytes.TrimSpace(m.ID), s.id) {
		return nil, backends.IDError(s.backend, s.method, s.id, m.ID)
	}
	if len(m.Error) > 0 && string(m.Error) != "null" {
		we := new(jsonrpc.Error)
		if err := json.Unmarshal(m.Error, we); err != nil {
			return nil, fmt.Errorf("malformed JSON-RPC error: %w", err)
		}
		return nil, we
	}
	if err := backends.ResultError(s.backend, s.method, m.Result); err != nil {
		return nil, err
	}
	return m.Result, nil
}
