package upstream

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// What a Legacy client's backend session gets outside the client's calls,
// sent here like everything else: a notification of the client's
// (notifications/roots/list_changed: Notify) and a request of the
// session's own on the client's behalf (logging/setLevel: Request). Each
// is one backend request: counted once in vmcp_backend_requests_total
// (revision legacy), bounded by the backend's timeout and the caller's ctx.

// errNoAsks refuses an ask on the stream of a request no client request
// is waiting on (Request): there is no stream to ask the client on.
var errNoAsks = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "vmcp relays no server-to-client request during " +
	"a request of the session's own"}

// Notify sends the notification method (params; nil: none) on the open
// backend session o of a Legacy client.
func (c *Core) Notify(ctx context.Context, o backends.OpenSession, method string, params json.RawMessage) error {
	sess, err := openedSession(o)
	if err != nil {
		return err
	}
	req := &Request{Method: method, Revision: RevisionLegacy}
	sctx, done := c.Begin(ctx, req, Target{Backend: o.Backend, Via: ViaRelay})
	sctx, cancel := context.WithTimeout(sctx, o.Backend.Timeout())
	defer cancel()
	return done(sess.Notify(sctx, wire.Notification(method, params)))
}

// Request sends the request method (params, an object) on the open
// backend session o of a Legacy client, as Do sends a client's (the
// backend's timeout, ctx's cancellation, the 404 resend), and returns the
// backend's raw result. Notifications on its stream reach no client
// request (counted undeliverable); an ask is refused to the backend.
func (c *Core) Request(ctx context.Context, o backends.OpenSession, method string, params json.RawMessage) (json.RawMessage, error) {
	sess, err := openedSession(o)
	if err != nil {
		return nil, err
	}
	req := &Request{Method: method, Revision: RevisionLegacy, Params: params}
	t := Target{Backend: o.Backend, Via: ViaRelay}
	sctx, done := c.Begin(ctx, req, t)
	st, err := c.doOn(ctx, sctx, req, t, sess, noRelease, done)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	for {
		m, err := st.Next(context.Background()) // the reader always ends the stream
		switch {
		case errors.Is(err, ErrStreamEnded):
			return nil, mcpmsg.WireError(o.Backend.Name(), context.Cause(ctx))
		case err != nil:
			return nil, err
		case m.Kind == KindResult:
			return m.Result, nil
		case m.Kind == KindAsk:
			if aerr := st.Answer(ctx, m.ID, nil, errNoAsks); aerr != nil {
				c.undeliverable(m.Method+" response", o.Backend.Name(), aerr)
			}
		default:
			c.undeliverable(m.Method, o.Backend.Name(), errors.New("no client request to deliver it on"))
		}
	}
}

// openedSession is o as the session Do sends on, without Do's resend on a
// new session when the backend forgot this one: the request belongs to
// this session alone.
func openedSession(o backends.OpenSession) (session, error) {
	switch {
	case o.Raw != nil:
		return onlySession{httpSession{o.Raw}}, nil
	case o.Conn != nil:
		return onlySession{connSession{o.Conn}}, nil
	}
	return nil, errors.New("upstream: an open backend session without a transport")
}

// onlySession is a session whose forgetting (mcpmsg.ErrSessionExpired)
// is a plain failure, not Do's cue to resend on a new session.
type onlySession struct{ session }

func (o onlySession) send(ctx context.Context, req *Request, t Target, body []byte) (exchange, error) {
	ex, err := o.session.send(ctx, req, t, body)
	if errors.Is(err, mcpmsg.ErrSessionExpired) {
		return nil, errors.New(err.Error())
	}
	return ex, err
}
