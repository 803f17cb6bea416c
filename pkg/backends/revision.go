package backends

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

// The revision a backend session speaks is the one that lets its client's
// flows work. The control connection (and the Modern clients that share
// it) negotiates the newest revision the backend has. A session opened for
// a Legacy client (SessionOptions.Legacy) asks for legacyRevision instead,
// on stdio, SSE and HTTP alike: a Legacy session is where a backend may
// send elicitation/create, sampling/createMessage and roots/list (at
// 2026-07-28 a go-sdk server refuses to: "return an InputRequests map
// instead"). Two exceptions keep the Modern session, whose input_required
// results vmcp fulfils from the client: a backend that refuses the Legacy
// initialize, and a streamable HTTP backend that answers it without an
// Mcp-Session-Id (stateless: it has no session to send requests on). Either
// is remembered until the control connection reconnects; a transport
// failure (refused connection, timeout, 5xx) only falls back for that one
// session.

// legacyRevision is the revision of backend sessions opened for Legacy
// clients on backends whose control connection is Modern.
const legacyRevision = wire.LatestLegacy

// sessionRevision is the revision a new backend session with opts asks for.
func (b *Backend) sessionRevision(opts SessionOptions) string {
	v := b.ProtocolVersion()
	if opts.Legacy && wire.IsModern(v) && !b.noLegacy.Load() {
		return legacyRevision
	}
	return v
}

// dialSession connects a backend session at the revision sessionRevision
// picks, falling back to the control connection's revision when the
// backend cannot keep a Legacy session (see above). dial connects one
// session at a version.
func (b *Backend) dialSession(ctx context.Context, opts SessionOptions,
	dial func(context.Context, string) (*mcp.ClientSession, *mcp.Client, error)) (*mcp.ClientSession, *mcp.Client, error) {
	want, control := b.sessionRevision(opts), b.ProtocolVersion()
	cs, client, err := dial(ctx, want)
	if want == control || ctx.Err() != nil || errors.Is(err, ErrProcessLimit) {
		return cs, client, err
	}
	if err == nil && (!b.isHTTP() || cs.ID() != "") {
		return cs, client, nil
	}
	if err == nil || answered(err) { // an answer, not a transport failure: remember it
		b.noLegacy.Store(true)
	}
	if err == nil {
		_ = cs.Close()
		b.log.Info("backend keeps no Legacy sessions (initialize answered without Mcp-Session-Id); Legacy clients' sessions use the Modern revision",
			"revision", control)
	} else {
		b.log.Info("backend refused a Legacy session; Legacy clients' sessions use the Modern revision",
			"revision", control, "error", err)
	}
	return dial(ctx, control)
}

// codeRejected is the go-sdk's code for a message its transport could not
// deliver (jsonrpc2.ErrRejected: an HTTP error status, a dropped
// connection), which is not the backend's answer.
const codeRejected = -32005

// answered reports whether err is the backend's own JSON-RPC error answer.
func answered(err error) bool {
	var we *jsonrpc.Error
	return errors.As(err, &we) && we.Code != codeRejected
}
