package backends

import (
	"context"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// What a backend sends during one request (notifications/progress,
// notifications/message, asks) reaches that request through the call
// core's sender (pkg/upstream): on its own HTTP response stream, or taken
// off a stdio or SSE connection by its connMux (progress by the token the
// request sent, logs by connMux's rule). What reaches the control
// connection's tap instead belongs to no request: the Manager's
// OnUndeliverable handler counts and logs it.

// controlTap takes the progress and log notifications of the control
// connection that no request written on it took (connMux): they reach no
// call, and are counted and logged as undeliverable.
func (b *Backend) controlTap(_ context.Context, msg *jsonrpc.Request) {
	switch msg.Method {
	case mcpmsg.MethodProgress:
		tok, err := mcpmsg.TokenOf(msg.Params)
		if err == nil {
			err = fmt.Errorf("no call in flight has it: %w", b.ids.tokens.Unmatched(tok))
		}
		b.undeliverable(msg.Method, err)
	case mcpmsg.MethodLog:
		b.undeliverable(msg.Method, errors.New("the log message relates to no single call in flight"))
	}
}

// OnUndeliverable sets the handler of a backend's messages that reach no
// call (a progress token no call in flight sent, a log relating to no
// single call, a notification on a direct call's stream with no Sink);
// unset, they are logged.
func (m *Manager) OnUndeliverable(f func(method, backend string, err error)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onUndeliverable = &f
	for _, b := range m.list {
		b.onUndeliverable.Store(&f)
	}
}

func (b *Backend) undeliverable(method string, err error) {
	if f := b.onUndeliverable.Load(); f != nil {
		(*f)(method, b.Name(), err)
		return
	}
	b.log.Warn("message not delivered", "method", method, "error", err)
}

// RaiseLogLevel asks cs, a Legacy session on b, to send every log message
// (logging/setLevel "debug", within b's timeout) when the backend offers
// logging, so vmcp can filter per request by the level each Modern client
// asked for. Modern backends take the level per request: left alone.
func (b *Backend) RaiseLogLevel(ctx context.Context, cs *mcp.ClientSession) error {
	r := cs.InitializeResult()
	if r == nil || r.Capabilities == nil || r.Capabilities.Logging == nil || wire.IsModern(r.ProtocolVersion) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, b.Timeout())
	defer cancel()
	return cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
}
