package upstream

import (
	"github.com/vmcp/vmcp/pkg/backends"
)

// Via is the transport a request takes to its backend.
type Via string

// The transports, one rule for both revisions (choose).
const (
	// ViaRelay: Core.Do on the Legacy client's own backend session
	// (tools/call, prompts/get and resources/read on any transport,
	// completion/complete on streamable HTTP; posted on an HTTP session,
	// where that session is Modern one self-contained POST per round;
	// written on a stdio or SSE session's go-sdk connection), its asks on
	// the call's own stream.
	ViaRelay Via = "relay"
	// ViaSession: the Legacy client's own go-sdk backend session (a
	// method the relay does not take).
	ViaSession Via = "session"
	// ViaDirect: one self-contained POST to a Modern streamable HTTP backend.
	ViaDirect Via = "direct"
	// ViaShared: the backend's control connection, shared by Modern clients.
	ViaShared Via = "shared"
	// ViaParked: a pooled backend session with the Modern client's
	// capabilities, parked between multi round-trip rounds while a Legacy
	// backend asks the client.
	ViaParked Via = "parked"
)

// relayed are the methods the relay serves for Legacy clients.
var relayed = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// choose is the transport rule. A Legacy client's requests go on its own
// backend sessions: tools/call, prompts/get and resources/read raw
// (Core.Do, which builds a Modern backend's Mcp-Param-* headers), on any
// transport, and completion/complete on a streamable HTTP backend; the
// rest through the go-sdk client. A Modern client's tools/call
// to a Modern HTTP backend is one direct POST unless the tool mirrors
// arguments in Mcp-Param-* headers (the go-sdk client builds those); a
// call to a Legacy backend is parked when the client can be asked, the
// backend is per-principal (which has no shared connection: the pooled
// session is keyed by the principal's forwarded headers) or streamable
// HTTP (a pooled session per call: a response the go-sdk client cannot
// decode breaks that session, not the control connection every Modern
// client's lists depend on); everything else uses the backend's shared
// control connection.
func choose(req *Request, t Target) Via {
	modernBackend := t.Backend.Modern()
	if req.Revision == RevisionLegacy {
		if relayed[req.Method] || (req.Method == "completion/complete" && t.Backend.HTTP()) {
			return ViaRelay
		}
		return ViaSession
	}
	switch {
	case modernBackend && req.Method == "tools/call" && t.Tool != nil && t.Backend.HTTP() && !backends.HeaderParams(t.Tool):
		return ViaDirect
	case !modernBackend && (req.Asks || t.Backend.PerPrincipal() || t.Backend.HTTP()) && relayed[req.Method]:
		return ViaParked
	}
	return ViaShared
}
