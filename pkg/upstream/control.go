package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
)

// The backends' own subscriptions, sent through the core (backends.Sender,
// registered by New): vmcp's listen streams on Modern HTTP backends and
// the shared resource subscriptions on control connections.

// maxListenEvent bounds one SSE event on a listen stream.
const maxListenEvent = 1 << 20

// methodListen is the Modern listen request.
const methodListen = "subscriptions/listen"

// Listen opens a subscriptions/listen asking want on b, a Modern
// backend: on streamable HTTP one self-contained POST (ViaDirect), on
// stdio or SSE a request on its control connection (ViaShared), and
// returns its notifications through the Stream's bounded queue (each
// event at most maxListenEvent). The backend's timeout bounds only its
// opening; ctx's end (or Close) ends it. One outcome is counted per
// listen, when it ends (backends.Sender).
func (c *Core) Listen(ctx context.Context, b *backends.Backend, want mcp.NotificationSubscriptions) (backends.Notifications, error) {
	sess, via, err := listenSession(b)
	if err != nil {
		return nil, err
	}
	params, err := json.Marshal(&mcp.SubscriptionsListenParams{Notifications: &want})
	if err != nil {
		return nil, err
	}
	req := &Request{Method: methodListen, Revision: RevisionModern, Params: params}
	s, err := c.sendOn(ctx, ctx, req, Target{Backend: b, Via: via}, sess, c.countOnly(ctx, req, b.Name()), true)
	if err != nil {
		return nil, err
	}
	return listenStream{s}, nil
}

// listenSession is where a listen of vmcp's own goes on b: its stateless
// endpoint (Modern streamable HTTP), else its Modern control connection
// (stdio, SSE), whose notifications for it connMux routes by subscription
// id.
func listenSession(b *backends.Backend) (session, Via, error) {
	if raw, ok := b.Stateless(); ok {
		return httpSession{raw}, ViaDirect, nil
	}
	if !b.HTTP() && b.Modern() {
		conn, err := b.SharedConn()
		if err != nil {
			return nil, "", err
		}
		return connSession{conn}, ViaShared, nil
	}
	return nil, "", fmt.Errorf("backend %q: %w", b.Name(), backends.ErrBackendDown)
}

// Control sends the request method with params on b's control connection
// (raw streamable HTTP on its session, or a message on its stdio or SSE
// connection) and waits for its result, with the backend's timeout, one
// count and one span (backends.Sender).
func (c *Core) Control(ctx context.Context, b *backends.Backend, method string, params any) error {
	p, err := json.Marshal(params)
	if err != nil {
		return err
	}
	req := &Request{Method: method, Revision: RevisionModern, Params: p}
	t := Target{Backend: b, Via: ViaShared}
	sctx, done := c.Begin(ctx, req, t)
	sess, err := controlSession(b)
	if err != nil {
		return done(err)
	}
	s, err := c.sendOn(ctx, sctx, req, t, sess, done, false)
	if err != nil {
		return err
	}
	defer s.Close()
	for {
		m, err := s.Next(ctx)
		if err != nil || m.Kind == KindResult {
			return err
		}
	}
}

// controlSession is b's control connection as a session Do can send on.
func controlSession(b *backends.Backend) (session, error) {
	if b.HTTP() {
		raw, err := b.ControlRaw()
		if err != nil {
			return nil, err
		}
		return httpSession{raw}, nil
	}
	conn, err := b.ControlConn()
	if err != nil {
		return nil, err
	}
	return connSession{conn}, nil
}

// sendOn is Do on a session chosen by the caller (no routing, no retry:
// the session is not a client's): done counts the outcome. A long
// request (a listen) has the backend's timeout only until the backend's
// answer begins, and each of its SSE events is bounded by maxListenEvent.
func (c *Core) sendOn(client, sctx context.Context, req *Request, t Target, sess session, done func(error) error, long bool) (*Stream, error) {
	s := c.newStream(client, sctx, req, t, sess, done)
	s.release = noRelease
	body, err := s.body(sctx, req)
	if err != nil {
		s.stop(nil)
		return nil, done(invalidParams(err))
	}
	ex, err := s.sess.send(s.httpCtx, req, t, body)
	if err != nil {
		if s.httpCtx.Err() != nil {
			err = s.cancelled(err)
		}
		s.stop(nil)
		return nil, done(err)
	}
	if long {
		s.mu.Lock()
		s.timer.Stop() // if it fired already, the stream ends with the timeout
		s.mu.Unlock()
		if sse, ok := ex.(*sseExchange); ok {
			sse.er.Limit(maxListenEvent)
		}
	}
	go s.read(ex)
	return s, nil
}

// countOnly is the done of a listen: one outcome in
// vmcp_backend_requests_total when it ends (no latency: a listen lives as
// long as its owner), cancelled when its owner ended it.
func (c *Core) countOnly(ctx context.Context, req *Request, backend string) func(error) error {
	return func(err error) error {
		outcome := "ok"
		switch {
		case err == nil:
		case cancelled(ctx, err) || errors.Is(err, errAbandoned):
			outcome = "cancelled"
		default:
			outcome = "error"
			c.metrics.BackendErrors.WithLabelValues(backend, req.Method, req.Revision).Inc()
		}
		c.metrics.BackendRequests.WithLabelValues(backend, req.Method, req.Revision, outcome).Inc()
		return err
	}
}

// listenStream is a listen's Stream as backends.Notifications.
type listenStream struct{ s *Stream }

func (l listenStream) Next(ctx context.Context) (string, json.RawMessage, error) {
	m, err := l.s.Next(ctx)
	switch {
	case err != nil:
		return "", nil, err
	case m.Kind == KindResult:
		return "", nil, backends.ErrListenEnded
	}
	return m.Method, m.Params, nil
}

func (l listenStream) Close() {
	l.s.Close()
	l.s.Wait()
}
