package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// cancelFlush bounds posting notifications/cancelled to a Legacy session.
const cancelFlush = 2 * time.Second

// read is the Stream's reader goroutine: it reads the backend's messages
// for the request (ex: an HTTP response's JSON body or SSE stream, or
// what a stdio or SSE connection's mux hands it) into the queue, then
// counts the outcome, queues the result or error last, and ends the
// exchange (an HTTP stream drained so its connection is reused). It ends
// with the response, or when the request is cancelled.
func (s *Stream) read(ex exchange) {
	defer close(s.ended)
	res, final, err := s.readExchange(ex)
	if err != nil && s.httpCtx.Err() != nil {
		err = s.cancelled(err)
	}
	s.over.Store(true)
	err = s.done(err)
	last := newItem(Message{Kind: KindResult, Result: res}, err)
	if !s.push(last) {
		select { // cancelled: still queued where there is room
		case s.q <- last:
		default:
		}
	}
	close(s.q)
	ex.Close(final)
	s.stop(nil)
}

// cancelled is the error of a request cancelled before its end (the
// client left, the timeout, Close), after telling the backend
// (notifications/cancelled; a Modern HTTP one saw its stream close).
func (s *Stream) cancelled(err error) error {
	cause := context.Cause(s.httpCtx)
	if s.sess.notifies() {
		reason := "cancelled"
		if cause != nil {
			reason = cause.Error()
		}
		ctx, cancel := context.WithTimeout(context.Background(), cancelFlush)
		if nerr := s.sess.Notify(ctx, wire.Cancelled(s.id, reason)); nerr != nil {
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

// readExchange reads ex to the response to s.id (final); notifications
// and asks before it are queued.
func (s *Stream) readExchange(ex exchange) (res json.RawMessage, final bool, err error) {
	for {
		data, err := ex.Next()
		if err != nil {
			return nil, false, err
		}
		res, final, err := s.onMessage(data)
		if final || err != nil {
			return res, final, err
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
	if !s.push(newItem(msg, nil)) {
		return nil, false, context.Cause(s.httpCtx)
	}
	return nil, false, nil
}

// response is the result of the response m, which must answer s.id: a
// backend's JSON-RPC error, or a result that is an object (absent, null or
// not an object is an error, never an empty success).
func (s *Stream) response(m *wire.Message) (json.RawMessage, error) {
	if !bytes.Equal(bytes.TrimSpace(m.ID), s.id) {
		return nil, mcpmsg.IDError(s.backend, s.method, s.id, m.ID)
	}
	if len(m.Error) > 0 && string(m.Error) != "null" {
		we := new(jsonrpc.Error)
		if err := json.Unmarshal(m.Error, we); err != nil {
			return nil, fmt.Errorf("malformed JSON-RPC error: %w", err)
		}
		return nil, we
	}
	if err := mcpmsg.ResultError(s.backend, s.method, m.Result); err != nil {
		return nil, err
	}
	return m.Result, nil
}
