package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/backends"
	bsession "github.com/vmcp/vmcp/pkg/backends/session"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// Do sends req to its backend and returns the Stream of what the backend
// sends back during the request: notifications, asks (server-to-client
// requests on the request's own stream), then exactly one result or error.
// req.Target, if set, is where it goes (Route or Pin ran before); else Do
// routes it. The backend session follows one isolation rule (session.go);
// the request gets the backend's timeout (paused while an ask waits on the
// client), ctx's cancellation (notifications/cancelled on a Legacy session,
// the stream closed on a Modern one), one resend on a new session when the
// backend forgot the session (404), one metrics outcome and one span. A
// failure before the backend answered is returned as the client's
// JSON-RPC error naming the backend. The caller must Close the Stream.
func (c *Core) Do(ctx context.Context, req *Request) (*Stream, error) {
	t, err := c.target(req)
	if err != nil {
		return nil, err
	}
	sctx, done := c.Begin(ctx, req, t)
	sess, release, err := c.session(sctx, req, t)
	if err != nil {
		return nil, done(err)
	}
	return c.doOn(ctx, sctx, req, t, sess, release, done)
}

// doOn is Do on the backend session sess (release ends its use), once
// Begin gave sctx and done.
func (c *Core) doOn(ctx, sctx context.Context, req *Request, t Target, sess session, release func(), done func(error) error) (*Stream, error) {
	s := c.newStream(ctx, sctx, req, t, sess, done)
	s.release = release
	body, err := s.body(sctx, req)
	if err != nil {
		s.stop(nil)
		return nil, done(invalidParams(err))
	}
	ex, err := s.post(req, body)
	if err != nil {
		if s.httpCtx.Err() != nil { // cancelled before the backend's answer began: it may run the request
			err = s.cancelled(err)
		}
		s.stop(nil)
		return nil, done(err)
	}
	go s.read(ex)
	return s, nil
}

// target is req's Target: the one Route or Pin gave, else Route's.
func (c *Core) target(req *Request) (Target, error) {
	if req.Target != nil {
		return *req.Target, nil
	}
	return c.Route(req)
}

// session is the backend session req goes on (session.go's rule): the
// Legacy client's own for Legacy clients, none on a Modern HTTP backend
// (ViaDirect), the control connection for a request routed ViaShared,
// else one keyed by principal and declared capabilities.
// Streamable HTTP sessions are posted on raw; stdio and SSE ones are
// written on through the go-sdk connection (transport.go).
func (c *Core) session(ctx context.Context, req *Request, t Target) (session, func(), error) {
	b := t.Backend
	if req.Sessions != nil {
		sess, err := sessionOf(ctx, req.Sessions, b)
		return sess, noRelease, err
	}
	if t.Via == ViaDirect || t.Via == ViaShared {
		sess, err := sessionless(b, t.Via)
		return sess, noRelease, err
	}
	set, release, err := c.sessions.set(req, b)
	if err != nil {
		return nil, nil, err
	}
	sess, err := sessionOf(ctx, set, b)
	if err != nil {
		release()
		return nil, nil, err
	}
	return sess, release, nil
}

// sessionOf is set's backend session on b, opened on first use.
func sessionOf(ctx context.Context, set *bsession.Set, b *backends.Backend) (session, error) {
	if b.HTTP() {
		raw, err := rawOf(set.Raw(ctx, b.Name()))
		if err != nil {
			return nil, err
		}
		return httpSession{raw}, nil
	}
	conn, err := rawOf(set.Conn(ctx, b.Name()))
	if err != nil {
		return nil, err
	}
	return connSession{conn}, nil
}

func noRelease() {}

// rawOf is bsession.Set.Raw's or Conn's answer as a session or an error.
func rawOf[S any](raw *S, ok bool, err error) (*S, error) {
	switch {
	case err != nil:
		return nil, err
	case !ok:
		return nil, fmt.Errorf("%w (no session yet)", backends.ErrBackendDown)
	}
	return raw, nil
}

// body is the request's JSON-RPC message: params with the _meta the
// session's revision wants (a Modern one gets protocolVersion, the
// client's capabilities, clientInfo and logLevel added) and the client's
// traceparent replaced by the backend span's.
func (s *Stream) body(ctx context.Context, req *Request) ([]byte, error) {
	meta, err := s.sess.RequestMeta(req.Meta, orEmpty(req.Caps), req.LogLevel)
	if err != nil {
		return nil, err
	}
	meta = tracing.RewriteMetaRaw(ctx, meta)
	return wire.Request(s.id, req.Method, withMeta(meta, req.Params)), nil
}

// orEmpty is caps, or {} for none.
func orEmpty(caps json.RawMessage) json.RawMessage {
	if len(caps) == 0 {
		return json.RawMessage(`{}`)
	}
	return caps
}

// withMeta is the params object with meta (nil: none) as its first member.
func withMeta(meta, params json.RawMessage) json.RawMessage {
	if len(meta) == 0 {
		if len(params) == 0 {
			return json.RawMessage(`{}`)
		}
		return params
	}
	out := make([]byte, 0, len(meta)+len(params)+10)
	out = append(append(out, `{"_meta":`...), meta...)
	if rest := trimObject(params); len(rest) > 0 {
		out = append(append(out, ','), rest...)
	}
	return append(out, '}')
}

// trimObject is the members of a params object, without its braces.
func trimObject(p json.RawMessage) []byte {
	p = bytes.TrimSpace(p)
	if len(p) < 2 {
		return nil
	}
	return bytes.TrimLeft(p[1:len(p)-1], " \t\r\n")
}

// post sends body on the stream's session; a backend that forgot the
// session (HTTP 404: the request was not processed) gets it once more on
// a new one.
func (s *Stream) post(req *Request, body []byte) (exchange, error) {
	ctx := s.httpCtx
	ex, err := s.sess.send(ctx, req, s.t, body)
	if !errors.Is(err, mcpmsg.ErrSessionExpired) {
		return ex, err
	}
	sess, release, rerr := s.core.session(ctx, req, s.t)
	if rerr != nil {
		return nil, rerr
	}
	s.release()
	s.sess, s.release = sess, release
	return s.sess.send(ctx, req, s.t, body)
}

// invalidParams is a request Do could not build (a _meta that is not an
// object): -32602 naming what failed.
func invalidParams(err error) error {
	return &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: err.Error()}
}

// nextID is the id of a request Do sends: "vmcp-u" and a number unique
// per Core, never equal to the go-sdk client's integer ids on a session.
func (c *Core) nextID() json.RawMessage {
	return json.RawMessage(`"vmcp-u` + strconv.FormatInt(c.ids.Add(1), 10) + `"`)
}
