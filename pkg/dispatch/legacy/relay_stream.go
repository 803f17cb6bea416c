package legacy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/wire"
)

// maxRelayAsks bounds the server-to-client requests one relayed call may
// have waiting on the client at once; more are refused to the backend.
const maxRelayAsks = 16

// relayStream is one relayed call's backend response stream: it forwards
// what the backend sends on it to the client's stream until the response.
type relayStream struct {
	s       *clientSession
	raw     *backends.RawSession
	out     *eventWriter
	id      []byte // vmcp's id of the request on the backend session
	backend string
	method  string // the relayed request's
	name    string // its routed name or URI, as the backend knows it (Mcp-Name)
	token   string // tokenKey of the client's progressToken ("" for none)

	ctx     context.Context // the call's; each relayed ask has a child
	settled chan struct{}   // closed once the call's outcome is known (and any cancellation sent)
	rest    io.ReadCloser   // the stream after the response, drained by relayCall

	wg    sync.WaitGroup
	mu    sync.Mutex
	asks  map[string]context.CancelCauseFunc // backend's request id -> cancel
	count int
}

// relayCall posts one request (params already routed) on raw, relays its
// stream to out and calls respond with the backend's raw result or the
// error for the client (errClientCancelled: no response is due). The rest
// of the backend's stream is drained after respond, so its connection is
// reused.
func (s *clientSession) relayCall(r *http.Request, raw *backends.RawSession, key string, m *message, name string, params map[string]json.RawMessage, out *eventWriter, respond func(json.RawMessage, error)) {
	backend := raw.Backend().Name()
	// One context, cancelled by the client (notifications/cancelled, or
	// its connection closing while the call is in flight), the session's
	// end, or the backend's timeout; not by the handler's return, so the
	// backend's stream can be drained after the response for reuse.
	ctx, cancel := context.WithCancelCause(context.WithoutCancel(r.Context()))
	stopClient := context.AfterFunc(r.Context(), func() { cancel(errClientGone) })
	stopEnded := context.AfterFunc(s.ended, func() { cancel(ErrSessionEnded) })
	timer := time.AfterFunc(raw.Backend().Timeout(), func() { cancel(context.DeadlineExceeded) })
	release := func() { stopEnded(); timer.Stop(); cancel(nil) }
	untrack, ok := s.relayState.track(key, tracked{cancel: cancel})
	if !ok {
		stopClient()
		release()
		respond(nil, errDuplicateID)
		return
	}
	// Progress the backend sends elsewhere than on this stream (its GET
	// stream, when it answers POSTs with JSON) reaches the tap by token.
	token := progressToken(params["_meta"])
	defer s.calls.startRelayed(ctx, backend, token, out)()

	rs := &relayStream{s: s, raw: raw, out: out, id: newRelayID(), backend: backend, method: m.Method, name: name, token: tokenKey(token), ctx: ctx,
		asks: map[string]context.CancelCauseFunc{}, settled: make(chan struct{})}
	res, err := rs.rounds(ctx, r.Header, m.Method, params)
	if err != nil && ctx.Err() != nil && rs.raw != nil {
		s.noteCancelled()
		rs.cancelBackend(context.Cause(ctx))
	}
	close(rs.settled)
	rs.endAsks() // the asks still waiting on the client are failed to the backend
	rs.wg.Wait()
	stopClient()
	untrack()
	switch cause := context.Cause(ctx); {
	case err == nil:
	case cause == errClientCancelled:
		err = errClientCancelled
	case cause == context.DeadlineExceeded || cause == ErrSessionEnded || cause == errClientGone:
		err = cause
	}
	respond(res, err)
	if rs.rest == nil {
		release()
		return
	}
	go func() { // ends with the stream, within drainGrace at most
		backends.DrainNow(rs.rest)
		release()
	}()
}

// progressToken is the progressToken of a request's raw _meta, decoded as
// the tap decodes the backend's (nil for none).
func progressToken(meta json.RawMessage) any {
	if !bytes.Contains(meta, []byte("progressToken")) {
		return nil
	}
	var m struct {
		Token any `json:"progressToken"`
	}
	_ = json.Unmarshal(meta, &m)
	return m.Token
}

// exchange posts the request and reads the backend's answer; a backend
// that forgot the session (404: the request was not processed) gets it
// once more on a new session.
func (rs *relayStream) exchange(ctx context.Context, h http.Header, method string, params map[string]json.RawMessage) (json.RawMessage, error) {
	body := wire.RequestFields(rs.id, method, params)
	resp, err := rs.raw.Call(ctx, h, method, rs.name, body)
	if errors.Is(err, backends.ErrSessionExpired) {
		var ok bool
		if rs.raw, ok, err = rs.s.backends.Raw(ctx, rs.backend); err == nil && !ok {
			rs.raw, err = nil, backends.ErrSessionExpired
		}
		if err == nil {
			resp, err = rs.raw.Call(ctx, h, method, rs.name, body)
		}
	}
	if err != nil {
		return nil, err
	}
	return rs.read(ctx, resp)
}

// read relays the backend's response (a JSON body or an SSE stream) and
// returns the result of rs.id.
func (rs *relayStream) read(ctx context.Context, resp *http.Response) (json.RawMessage, error) {
	ct := resp.Header.Get("Content-Type")
	switch {
	case wire.IsMediaType(ct, "application/json"):
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, mcp.DefaultMaxEventSize+1))
		if err != nil {
			return nil, err
		}
		if res, err, done := rs.onMessage(ctx, data); done {
			return res, err
		}
		return nil, errors.New("JSON response is not the response to the request")
	case wire.IsMediaType(ct, "text/event-stream"):
		er := wire.NewEventReader(resp.Body)
		defer er.Release() // onMessage gets a copy of each event: its message outlives the read
		for {
			data, err := er.Next()
			if err != nil {
				resp.Body.Close()
				if errors.Is(err, io.EOF) {
					return nil, errors.New("response stream ended without a response")
				}
				return nil, err
			}
			if res, err, done := rs.onMessage(ctx, bytes.Clone(data)); done {
				rs.rest = resp.Body
				return res, err
			}
		}
	}
	resp.Body.Close()
	return nil, fmt.Errorf("unsupported content type %q", ct)
}

// onMessage handles one message of the backend's stream (data is its own:
// the message and its result alias it); done is true for the response to
// rs.id, with its result or JSON-RPC error, and for a response to any
// other id, with backends.IDError.
func (rs *relayStream) onMessage(ctx context.Context, data []byte) (res json.RawMessage, err error, done bool) {
	var m message
	if err := wire.Decode(data, &m); err != nil {
		rs.s.d.undeliverable("(malformed)", rs.s.id, rs.backend, err)
		return nil, nil, false
	}
	switch {
	case m.Method == "":
		if !bytes.Equal(m.ID, rs.id) { // no other request's response is due on this one's POST
			return nil, backends.IDError(rs.backend, rs.method, rs.id, m.ID), true
		}
		if len(m.Error) > 0 && string(m.Error) != "null" { // "error": null is none, as on the other paths
			var we jsonrpc.Error
			if err := json.Unmarshal(m.Error, &we); err != nil {
				return nil, fmt.Errorf("malformed JSON-RPC error: %w", err), true
			}
			return nil, &we, true
		}
		if err := backends.ResultError(rs.backend, rs.method, m.Result); err != nil {
			return nil, err, true // absent, null or not an object: never an empty success
		}
		return m.Result, nil, true
	case len(m.ID) > 0 && string(m.ID) != "null":
		rs.ask(&m)
	default:
		rs.notification(data, &m)
	}
	return nil, nil, false
}

// notification forwards a backend notification on the call's stream as
// the go-sdk path would deliver it: progress (the client's own token, as
// it was sent on) in order before the response, log messages by the
// session's level, resource updates to this session if subscribed.
func (rs *relayStream) notification(data []byte, m *message) {
	var err error
	switch m.Method {
	case "notifications/progress":
		tok := progressToken(m.Params)
		if tok == nil { // absent or null: it belongs to no request
			err = fmt.Errorf("%w (on the stream of a call that sent %s)", backends.ErrProgressNoToken, orNone(rs.token))
			break
		}
		if rs.token == "" || tokenKey(tok) != rs.token {
			err = fmt.Errorf("%w: token %v on the stream of a call that sent %s", backends.ErrProgressUnknownToken, tok, orNone(rs.token))
			break
		}
		err = rs.out.send(data)
	case "notifications/elicitation/complete":
		err = rs.out.send(data)
	case "notifications/message":
		var p mcp.LoggingMessageParams
		if err = json.Unmarshal(m.Params, &p); err == nil {
			err = rs.s.front.Log(context.Background(), &p)
		}
	case "notifications/resources/updated":
		var p mcp.ResourceUpdatedNotificationParams
		if err = json.Unmarshal(m.Params, &p); err == nil {
			rs.s.d.resourceUpdated(rs.s, &p)
		}
	case "notifications/cancelled": // the backend withdraws a server-to-client request
		var p struct {
			RequestID json.RawMessage `json:"requestId"`
		}
		if json.Unmarshal(m.Params, &p) == nil {
			rs.mu.Lock()
			if cancel := rs.asks[backendKey(p.RequestID)]; cancel != nil {
				cancel(errWithdrawn)
			}
			rs.mu.Unlock()
		}
	}
	if err != nil {
		rs.s.d.undeliverable(m.Method, rs.s.id, rs.backend, err)
	}
}

func orNone(tokenKey string) string {
	if tokenKey == "" {
		return "none"
	}
	return "another"
}

// cancelBackend tells the backend the call was cancelled (the client
// cancelled or left, the call timed out or the session ended). A Modern
// backend was told already: the call's stream closed with its context
// (2026-07-28: closing the stream MUST be treated as cancellation).
func (rs *relayStream) cancelBackend(cause error) {
	if rs.raw.Modern() {
		return
	}
	reason := "cancelled"
	if cause != nil {
		reason = cause.Error()
	}
	b := wire.Cancelled(rs.id, reason)
	ctx, cancel := context.WithTimeout(context.Background(), cancelFlush)
	defer cancel()
	if err := rs.raw.Notify(ctx, b); err != nil {
		rs.s.d.undeliverable("notifications/cancelled", rs.s.id, rs.backend, err)
	}
}
