package backends

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/config"
)

// A stdio backend with isolation: shared runs one process for every
// client: session.Set.Get hands Legacy client sessions the control
// connection (which Modern clients share anyway) instead of starting a
// process per session. Over it nothing the backend sends on its own can be
// attributed to one client, so the control connection refuses the
// backend's server-to-client requests (roots/list, sampling, elicitation)
// with an error. Progress reaches only calls that attached a vmcp-minted
// token (sink.go: Modern calls); logs are never guessed to belong to the
// lone attached call, since Legacy calls run there unattached; the rest is
// dropped and counted as undeliverable. A client's log level is not applied
// to the shared process.

// SharedProcess reports whether b is a stdio backend with isolation:
// shared (client sessions use its control connection: SharedConn).
func (b *Backend) SharedProcess() bool {
	return b.cfg.Transport == config.TransportStdio && b.cfg.Isolation == config.IsolationShared
}

// refuseUnattributable is receiving middleware on every control
// connection. It declares the capabilities vmcp bridges
// (bridgedCapabilities), but a server-to-client request on it belongs to no
// client that can answer it: calls that can be asked run on their own
// backend sessions (Legacy clients) or parked ones (Modern clients), so
// the request is refused with a JSON-RPC error and the backend gives its
// own answer.
func (b *Backend) refuseUnattributable(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		switch method {
		case "roots/list", "sampling/createMessage", "elicitation/create":
			why := "vmcp's shared connection to it serves no client that can answer (the calling client did not declare the capability, or the request relates to no call)"
			if b.SharedProcess() {
				why = "it runs one process shared by all clients (isolation: shared), so the request cannot be attributed to one"
			}
			lv := slog.LevelWarn
			if method == "roots/list" { // servers ask for roots when a client connects: routine, not a problem
				lv = slog.LevelDebug
			}
			b.log.Log(ctx, lv, "server-to-client request refused on the control connection", "method", method)
			return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest,
				Message: fmt.Sprintf("vmcp: %s refused: backend %q: %s", method, b.cfg.Name, why)}
		}
		return next(ctx, method, req)
	}
}
