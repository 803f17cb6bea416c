package upstream

// Via is the transport a request takes to its backend.
type Via string

// The transports, one rule for both revisions (choose).
const (
	// ViaRelay: Core.Do on the Legacy client's own backend session
	// (tools/call, prompts/get, resources/read and completion/complete on
	// any transport; posted on an HTTP session,
	// where that session is Modern one self-contained POST per round;
	// written on a stdio or SSE session's go-sdk connection), its asks on
	// the call's own stream.
	ViaRelay Via = "relay"
	// ViaSession: Core.Subscription on the Legacy client's own backend
	// session (resources/(un)subscribe): through Do on a Legacy one, a
	// listen the client session holds on a Modern one (subscribe.go).
	ViaSession Via = "session"
	// ViaDirect: Do as one self-contained POST to a Modern streamable
	// HTTP backend (no session; Mcp-Param-* headers built by Do), for any
	// request and any principal, per-principal backends included.
	ViaDirect Via = "direct"
	// ViaShared: Do on the control connection of a stdio or SSE backend,
	// shared by Modern clients, for requests of no principal that need no
	// session (auth off, the client cannot be asked). Lists and health use
	// the control connection too, outside Do.
	ViaShared Via = "shared"
	// ViaKeyed: Do on a Legacy backend session keyed by the Modern
	// client's principal and capabilities (session.go), on any transport;
	// the Modern dispatcher parks the Stream while the backend asks.
	ViaKeyed Via = "keyed"
)

// legacyDo are the Legacy methods besides the relayed ones that Core.Do
// sends on the client's own backend session, on every transport.
var legacyDo = map[string]bool{"completion/complete": true}

// relayed are the methods the relay serves for Legacy clients.
var relayed = map[string]bool{"tools/call": true, "prompts/get": true, "resources/read": true}

// choose is the transport rule. A Legacy client's requests go on its own
// backend sessions: tools/call, prompts/get and resources/read raw
// (Core.Do, which builds a Modern backend's Mcp-Param-* headers), and so
// does completion/complete, on any transport; subscriptions go through
// Core.Subscription. A Modern client's request is always
// sent by Do (chooseModern).
func choose(req *Request, t Target) Via {
	if req.Revision == RevisionLegacy {
		if relayed[req.Method] || legacyDo[req.Method] {
			return ViaRelay
		}
		return ViaSession
	}
	return chooseModern(req, t)
}

// chooseModern is choose for a Modern client's request. To a Modern HTTP
// backend it needs no session: every request is one direct POST. To any
// other backend, a call, get or read goes on a keyed session (never one
// another principal's requests run on, opened at a Legacy revision so the
// backend can ask) when the backend is Legacy HTTP, the client can be
// asked, it has a principal, or the backend is per-principal; so does a
// completion, except that asking plays no part. What is left (a stdio or
// SSE backend, no principal, nothing to ask) goes on the control
// connection.
func chooseModern(req *Request, t Target) Via {
	switch {
	case t.Backend.Modern() && t.Backend.HTTP():
		return ViaDirect
	case relayed[req.Method] && needsKeyed(req, t):
		return ViaKeyed
	case req.Method == "completion/complete" && (t.Backend.HTTP() || !req.Principal.Anonymous() || t.Backend.PerPrincipal()):
		return ViaKeyed
	}
	return ViaShared
}

// needsKeyed reports whether a Modern call, get or read to a backend that
// is not Modern HTTP needs a keyed session: the backend is Legacy HTTP,
// the client can be asked, it has a principal, or the backend is
// per-principal.
func needsKeyed(req *Request, t Target) bool {
	return !t.Backend.Modern() && t.Backend.HTTP() || req.Asks || !req.Principal.Anonymous() || t.Backend.PerPrincipal()
}
