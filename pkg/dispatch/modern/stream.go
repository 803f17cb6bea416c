package modern

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// Progress and logs for Modern clients (2026-07-28): a request whose _meta
// carries a progressToken gets notifications/progress, and one with
// _meta["io.modelcontextprotocol/logLevel"] gets notifications/message at
// or above that level, on its own response. The response stays a plain JSON
// body until the first such notification; then it becomes text/event-stream
// and the result (or error) is its last event. A request without logLevel
// never gets a log message (logging: "MUST NOT").

// callStream is where the notifications of one Modern request's backend
// request go: the seam between the call core's Stream (every transport:
// direct POST, control connection, keyed session, parked call) and the
// client's response. The dispatcher creates it in serveMRTR; the Stream's
// readers deliver to it through Notify (direct.go) and deliver
// (park_stream.go).
type callStream struct {
	rq       *request
	d        *Dispatcher       // counts undeliverable messages
	backend  string            // for undeliverable messages
	token    json.RawMessage   // the client's progressToken exactly as sent; nil: none
	minted   string            // the token the backend sees instead ("" without token)
	minLevel int               // index in logLevels of the lowest level delivered; -1: no logs
	ew       *wire.EventWriter // the response: JSON until the first notification, then SSE (nil unless asked)
}

// logLevels are the 2026-07-28 (RFC 5424) log levels, least severe first.
var logLevels = []mcp.LoggingLevel{"debug", "info", "notice", "warning", "error", "critical", "alert", "emergency"}

// newCallStream returns the stream of rq for a call to backend, reading the
// client's progressToken (raw, from the request's params) and logLevel from
// meta. An unknown level asks for no logs.
func (d *Dispatcher) newCallStream(rq *request, backend string, meta mcp.Meta) *callStream {
	s := &callStream{rq: rq, d: d, backend: backend, minLevel: -1}
	if lv, ok := meta[mcp.MetaKeyLogLevel].(string); ok {
		s.minLevel = slices.Index(logLevels, mcp.LoggingLevel(lv))
	}
	if _, ok := meta["progressToken"]; ok {
		var p struct {
			Meta struct {
				Token json.RawMessage `json:"progressToken"`
			} `json:"_meta"`
		}
		if json.Unmarshal(rq.params, &p) == nil && len(p.Meta.Token) > 0 && !bytes.Equal(p.Meta.Token, []byte("null")) {
			s.token, s.minted = p.Meta.Token, d.mgr.Tokens().Mint()
		}
	}
	if s.asked() {
		s.ew = wire.NewEventWriter(rq.w)
	}
	rq.stream = s
	return s
}

// asked reports whether the client asked for progress or logs.
func (s *callStream) asked() bool { return s.token != nil || s.minLevel >= 0 }

// level is the client's logLevel, "" for none.
func (s *callStream) level() string {
	if s.minLevel < 0 {
		return ""
	}
	return string(logLevels[s.minLevel])
}

// Notify delivers a notification of the call's backend request: progress
// must carry the token minted for this call (anything else is dropped and
// counted); then deliver.
func (s *callStream) Notify(method string, params json.RawMessage) {
	if method == mcpmsg.MethodProgress {
		tok, err := mcpmsg.TokenOf(params)
		if err != nil {
			s.undeliverable(method, err)
			return
		}
		if s.minted == "" || tok != s.minted {
			s.undeliverable(method, fmt.Errorf("not sent by vmcp for this call: %w", s.d.mgr.Tokens().Unmatched(tok)))
			return
		}
	}
	s.deliver(method, params)
}

// deliver writes one notification of the backend's call to the client:
// progress under the client's own token, logs at or above its level (the
// rest are dropped as asked, not counted).
func (s *callStream) deliver(method string, params json.RawMessage) {
	switch method {
	case mcpmsg.MethodProgress:
		if s.token == nil {
			s.undeliverable(method, errors.New("the waiting request sent no progressToken"))
			return
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(params, &m); err != nil {
			s.undeliverable(method, err)
			return
		}
		m["progressToken"] = s.token
		params, _ = json.Marshal(m)
	case mcpmsg.MethodLog:
		var p struct {
			Level mcp.LoggingLevel `json:"level"`
		}
		if s.minLevel < 0 || json.Unmarshal(params, &p) != nil || slices.Index(logLevels, p.Level) < s.minLevel {
			return
		}
	default:
		s.undeliverable(method, errors.New("not deliverable on a 2026-07-28 request stream"))
		return
	}
	err := s.ew.Send(wire.Notification(method, params))
	if method == mcpmsg.MethodProgress && errors.Is(err, wire.ErrStreamClosed) {
		err = fmt.Errorf("%w: its response was sent", mcpmsg.ErrProgressAfterEnd)
	}
	if err != nil {
		s.undeliverable(method, err)
	}
}

// finish writes the response msg: the last event when the SSE response has
// begun, else a JSON body with status; later notifications are
// undeliverable.
func (s *callStream) finish(status int, msg []byte) {
	if s.ew == nil { // nothing asked, nothing written before
		s.rq.write(status, msg)
		return
	}
	if err := s.ew.Final(status, msg); err != nil {
		s.d.log.Debug("response not written", "backend", s.backend, "error", err)
	}
}

func (s *callStream) undeliverable(method string, err error) {
	s.d.undeliverable(method, s.backend, err)
}

// undeliverable counts (vmcp_undeliverable_messages_total) a backend's
// message that reaches no client and logs it at a bounded rate
// (telemetry.Undelivered); also the handler of
// backends.Manager.OnUndeliverable.
func (d *Dispatcher) undeliverable(method, backend string, err error) {
	d.opts.Metrics.Undelivered.Report(d.log, method, backend, mcpmsg.DropReason(err), err)
}
