package legacy

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// targetMetaKey marks a resources/updated notification with the one client
// session it belongs to; the sending middleware drops it for every other
// session and strips the mark. (Server.ResourceUpdated would otherwise send
// it to every session subscribed to the URI, once per backend session.)
const targetMetaKey = "vmcp.dev/targetSession"

// resourceUpdated delivers a backend session's resources/updated to its own
// client session only, if that session subscribed to the URI.
func (d *Dispatcher) resourceUpdated(s *clientSession, p *mcp.ResourceUpdatedNotificationParams) {
	cp := *p
	cp.Meta = mcp.Meta{targetMetaKey: s.id}
	for k, v := range p.Meta {
		cp.Meta[k] = v
	}
	if err := d.server.ResourceUpdated(context.Background(), &cp); err != nil {
		d.undeliverable("notifications/resources/updated", s.id, "", err)
	}
}

// targeted is sending middleware: a message marked for one session is sent
// to that session only, without the mark; a list_changed reaches a
// session only when its principal's view changed (listChanged).
func (d *Dispatcher) targeted(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if ss, _ := req.GetSession().(*mcp.ServerSession); !d.listChanged(ss, method) {
			return nil, nil
		}
		if method != "notifications/resources/updated" {
			return next(ctx, method, req)
		}
		p, ok := req.GetParams().(*mcp.ResourceUpdatedNotificationParams)
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if !ok || ss == nil {
			return next(ctx, method, req)
		}
		target, marked := p.Meta[targetMetaKey]
		if !marked {
			return next(ctx, method, req)
		}
		if target != ss.ID() {
			return nil, nil
		}
		cp := *p
		cp.Meta = make(mcp.Meta, len(p.Meta)-1)
		for k, v := range p.Meta {
			if k != targetMetaKey {
				cp.Meta[k] = v
			}
		}
		if len(cp.Meta) == 0 {
			cp.Meta = nil
		}
		return next(ctx, method, &mcp.ServerRequest[*mcp.ResourceUpdatedNotificationParams]{Session: ss, Params: &cp})
	}
}

// logLevels are the levels logging/setLevel may name (MCP's, RFC 5424's).
var logLevels = map[mcp.LoggingLevel]bool{"debug": true, "info": true, "notice": true, "warning": true,
	"error": true, "critical": true, "alert": true, "emergency": true}

// setLevelMiddleware applies a client's logging/setLevel to all of its
// backend sessions, open now or opened later. A level MCP does not define
// is refused (-32602) before anything is sent; a backend refusing the
// level is logged at most once a second (the client can repeat it).
func (d *Dispatcher) setLevelMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		p, _ := req.GetParams().(*mcp.SetLoggingLevelParams)
		if method == "logging/setLevel" && p != nil && !logLevels[p.Level] {
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "logging/setLevel: unknown level " +
				wire.Quote(string(p.Level)) + " (debug, info, notice, warning, error, critical, alert, emergency)"}
		}
		res, err := next(ctx, method, req)
		if method != "logging/setLevel" || err != nil {
			return res, err
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		s, serr := d.session(ss)
		if p == nil || serr != nil {
			return res, err
		}
		s.mu.Lock()
		s.logLevel = p.Level
		s.mu.Unlock()
		for _, o := range s.backends.Open() {
			d.applyLevel(ctx, s.id, o, p.Level)
		}
		return res, err
	}
}

// undeliverable counts a server-to-client message that could not be
// delivered and logs it at a bounded rate (telemetry.Undelivered).
func (d *Dispatcher) undeliverable(method, session, backend string, err error) {
	d.metrics.Undelivered.Report(d.log, method, backend, mcpmsg.DropReason(err), err, "session", telemetry.SessionTag(session))
}
