package legacy

import (
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// The relay serves a Legacy client's tools/call, resources/read and
// prompts/get routed to a Legacy streamable HTTP backend without the go-sdk
// server and client: the request is decoded once, its name rewritten, and
// it is posted on the client's own backend session; the backend's stream
// (progress, log messages, server-to-client requests, the response) comes
// back event by event with the ids mapped. Anything else, and any request
// the relay cannot take as a whole, goes to the go-sdk handler unchanged.

// relayMethods maps each relayed method to the params key it is routed by.
var relayMethods = map[string]string{"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

// message is a JSON-RPC message as the relay reads it (wire.Message).
type message = wire.Message

// relay serves one POST of client session s if it can: a relayed call,
// the client's answer to a relayed server-to-client request, its
// cancellation of a relayed call, or a notification vmcp ignores. It returns false, with r.Body intact,
// to hand the request to the go-sdk handler; sdk is then the request the
// go-sdk will serve if it is a call (nil otherwise), so that the session's
// in-flight ids span both paths.
func (d *Dispatcher) relay(w http.ResponseWriter, r *http.Request, s *clientSession) (handled bool, sdk *message) {
	if !relayable(r) || s.front.InitializeParams() == nil {
		return false, nil
	}
	body, ok := d.readBody(r)
	if !ok {
		return false, nil
	}
	var m message
	if !wire.DecodeSingle(body, &m) {
		return false, nil // batches and malformed messages get the go-sdk's answer
	}
	return d.relayMessage(w, r, s, &m)
}

// relayMessage serves one decoded message of relay's if it can (relay's
// results).
func (d *Dispatcher) relayMessage(w http.ResponseWriter, r *http.Request, s *clientSession, m *message) (handled bool, sdk *message) {
	key, hasID := wire.IDKey(m.ID)
	switch {
	case m.Method == "" && hasID:
		return s.relayState.answer(w, key, m), nil
	case m.Method == "notifications/cancelled":
		return s.relayState.cancel(w, m.Params), nil
	case hasID && relayMethods[m.Method] != "" && d.relayCall(w, r, s, key, m):
		return true, nil
	case hasID && listMembers[m.Method] != "":
		d.opts.Exchanges.Lookup(r.Header).Observe(m.Method, "", nil) // the endpoint's span and metrics
		d.serveList(w, s, m)
		return true, nil
	case hasID && m.Method != "":
		return false, m
	case !hasID && m.Method != "" && !servedMethods[m.Method]:
		d.ignoreNotification(w, s, m.Method)
		return true, nil
	}
	return false, nil
}

// relayable checks what the go-sdk handler checks before reading a POST:
// media types, protocol version header, no Last-Event-ID. (Host and Origin
// were checked at the edge, pkg/edge.)
func relayable(r *http.Request) bool {
	return wire.IsMediaType(r.Header.Get("Content-Type"), "application/json") &&
		wire.IsLegacyRevision(r.Header.Get("Mcp-Protocol-Version")) && r.Header.Get("Last-Event-ID") == "" &&
		wire.AcceptsBoth(r.Header.Values("Accept"))
}

// readBody returns a POST body of at most MaxBodyBytes and leaves it on r
// for the go-sdk handler (wire.ReadBody); a longer or unreadable one is
// left for that handler to answer (413).
func (d *Dispatcher) readBody(r *http.Request) ([]byte, bool) {
	limit := d.opts.MaxBodyBytes
	if limit <= 0 {
		limit = config.DefaultMaxBodyBytes
	}
	body, err := wire.ReadBody(r, limit)
	return body, err == nil
}

// relayCall relays one request the call core routes ViaRelay through its
// one sender (upstream.Core.Do) on the client's own backend sessions; false
// hands it to the go-sdk handler (unknown name). Stdio and SSE backends
// are relayed too (Do writes on the session's go-sdk connection).
func (d *Dispatcher) relayCall(w http.ResponseWriter, r *http.Request, s *clientSession, key string, m *message) bool {
	params, err := wire.DecodeObject(m.Params)
	var name string
	if err != nil || json.Unmarshal(params[relayMethods[m.Method]], &name) != nil {
		return false
	}
	dropCaseVariants(params, relayMethods[m.Method], "_meta")
	dropRoundState(params)
	req := &upstream.Request{Method: m.Method, Name: name, Revision: upstream.RevisionLegacy, Principal: identity.From(r.Context()), Header: r.Header}
	d.opts.Exchanges.Lookup(r.Header).ObserveRawMeta(m.Method, name, params["_meta"]) // a _meta.traceparent parents the request's span
	t, err := d.core.Resolve(req)
	if err != nil || t.Via != upstream.ViaRelay {
		return false // the go-sdk path answers (unknown names too)
	}
	if lerr := d.core.Admit(req, t); lerr != nil { // rate limits: once the relay sends it
		_ = newEventWriter(w).respond(m.ID, nil, lerr)
		return true
	}
	d.metrics.Relayed.WithLabelValues(m.Method).Inc()
	if t.Name != name {
		params[relayMethods[m.Method]] = wire.AppendString(nil, t.Name)
	}
	s.prepare(req, t, params)
	out := newEventWriter(w)
	defer out.close()
	res, err := s.relayCall(r, req, key, params, out)
	var werr error
	switch err {
	case errClientCancelled:
		return true // no response is due
	case errDuplicateID:
		werr = out.fail(http.StatusBadRequest, m.ID, err)
	default:
		werr = out.respond(m.ID, res, err)
	}
	if werr != nil {
		d.undeliverable(m.Method+" response", s.id, t.Backend.Name(), werr)
	}
	return true
}

// capabilitiesRaw is the client's declared capabilities as JSON, encoded
// once per session ({} if it declared none), as the go-sdk client encodes
// its own (capabilitiesV2).
func (s *clientSession) capabilitiesRaw() json.RawMessage {
	s.capsOnce.Do(func() {
		s.caps = json.RawMessage(`{}`)
		if ip := s.front.InitializeParams(); ip != nil && ip.Capabilities != nil {
			if b, err := json.Marshal(capabilitiesV2{*ip.Capabilities, ip.Capabilities.RootsV2}); err == nil {
				s.caps = b
			}
		}
	})
	return s.caps
}

// capabilitiesV2 encodes client capabilities with roots only if declared:
// its Roots hides mcp.ClientCapabilities' deprecated value-typed Roots,
// which encoding/json never omits ("roots":{} announced roots for every
// client; the go-sdk's own encoding does the same, go-sdk #607).
type capabilitiesV2 struct {
	mcp.ClientCapabilities
	Roots *mcp.RootCapabilities `json:"roots,omitempty"`
}

// newRelayID numbers the requests the relay sends its clients (d.relayIDs,
// one count per server); as strings ("vmcp-N") they never equal the
// go-sdk's integer ids on the same sessions.
func (d *Dispatcher) newRelayID() []byte {
	id := append([]byte(`"vmcp-`), strconv.FormatInt(d.relayIDs.Add(1), 10)...)
	return append(id, '"')
}

// ErrSessionEnded fails a call whose client session ended (DELETE, idle
// timeout, shutdown) while it was in flight.
var ErrSessionEnded = errors.New("client session ended")

// errDuplicateID refuses a request whose id is already in flight in the
// session (a response or cancellation could not tell the two apart).
var errDuplicateID = &jsonrpc.Error{Code: jsonrpc.CodeInvalidRequest, Message: "request id is already in flight in this session"}

// errClientGone ends a relayed call whose client's connection closed.
var errClientGone = errors.New("client disconnected")

// errClientCancelled ends a relayed call the client cancelled: it gets no
// response (notifications/cancelled: the receiver SHOULD NOT respond).
var errClientCancelled = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "request cancelled by the client"}

// roundMembers are the params members of a multi round-trip retry. The
// relay runs a call's rounds itself (relay_rounds.go) and a Legacy client
// has none to send (2025-11-25): a client's own would hand the backend a
// requestState vmcp never saw, forged or replayed, as if the backend had
// issued it.
var roundMembers = []string{"inputResponses", "requestState"}

// dropRoundState removes a Legacy client's roundMembers (and their case
// variants) from params before the first round.
func dropRoundState(params map[string]json.RawMessage) {
	for k := range params {
		for _, key := range roundMembers {
			if strings.EqualFold(k, key) {
				delete(params, k)
			}
		}
	}
}

// dropCaseVariants removes the params members whose names differ from one
// of keys only by case ("Name" beside "name"): vmcp routes and authorizes
// by the exact member, and a backend that matches names case-insensitively
// (Go's encoding/json does, the last one winning) must not see another.
func dropCaseVariants(params map[string]json.RawMessage, keys ...string) {
	for k := range params {
		for _, key := range keys {
			if k != key && strings.EqualFold(k, key) {
				delete(params, k)
			}
		}
	}
}
