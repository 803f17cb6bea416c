package upstream

import (
	"github.com/vmcp/vmcp/pkg/backends"
)

// Via is the transport a request takes to its backend.
type Via string

// The transports, one rule for both revisions (choose).
const (
	// ViaRelay: raw JSON-RPC on the Legacy client's own backend session
	// (a streamable HTTP backend; tools/call, prompts/get and
	// resources/read), or, where that session is Modern, one
	// self-contained POST per round.
	ViaRelay Via = "relay"
	// ViaSession: the Legacy client's own go-sdk backend session (stdio,
	// SSE, a Modern tool with Mcp-Param-* headers, or a method the relay
	// does not take).
	ViaSession Via = "session"
	// ViaDirect: one self-contained POST to a Modern streamable HTTP backend.
	ViaDirect Via = "direct"
	// ViaShared: the backend's control connection, shared by Modern clients.
	ViaShared Via = "shared"
	// ViaKeyed: Do on a Legacy HTTP backend session keyed by the Modern
	// client's principal and capabilities (session.go); the Modern
	// dispatcher parks the Stream while the backend asks the client.
	ViaKeyed Via = "keyed"
	// ViaParked: a pooled go-sdk backend session with the Modern client's
	// capabilities, parked between rounds while a Legacy stdio or SSE
	// backend asks the client (until Do sends on those transports).
	ViaParked Via = "parked"
)

// relayed are the methods the relay serves for Legacy clients.
var relayed = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// choose is the transport rule. A Legacy client's requests go on its own
// backend sessions: raw when the backend is streamable HTTP (on a Modern
// one, unless the tool mirrors arguments in Mcp-Param-* headers), else
// through the go-sdk client. A Modern client's tools/call to a Modern HTTP
// backend is one direct POST unless the tool mirrors arguments in
// Mcp-Param-* headers (the go-sdk client builds those). Its call, get or
// read to a Legacy HTTP backend, and its completion there when it has a
// principal, go on a keyed session (never one another principal's
// requests run on); a call to a Legacy stdio or SSE backend is parked
// when the client can be asked or the backend is per-principal.
// Everything else uses the backend's shared control connection.
func choose(req *Request, t Target) Via {
	modernBackend := t.Backend.Modern()
	if req.Revision == RevisionLegacy {
		headers := modernBackend && req.Method == "tools/call" && (t.Tool == nil || backends.HeaderParams(t.Tool))
		if relayed[req.Method] && t.Backend.HTTP() && !headers {
			return ViaRelay
		}
		return ViaSession
	}
	switch {
	case modernBackend && req.Method == "tools/call" && t.Tool != nil && t.Backend.HTTP() && !backends.HeaderParams(t.Tool):
		return ViaDirect
	case modernBackend:
		return ViaShared
	case t.Backend.HTTP() && (relayed[req.Method] || req.Method == "completion/complete" && !req.Principal.Anonymous()):
		return ViaKeyed
	case (req.Asks || t.Backend.PerPrincipal()) && relayed[req.Method]:
		return ViaParked
	}
	return ViaShared
}
