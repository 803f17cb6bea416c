package legacy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/backends"
)

// relayState is a client session's relayed calls, by the client's request
// id (for notifications/cancelled), and its relayed server-to-client
// requests awaiting the client's answer, by vmcp's id.
type relayState struct {
	mu    sync.Mutex
	calls map[string]*context.CancelCauseFunc
	asks  map[string]chan *message
}

func newRelayState() *relayState {
	return &relayState{calls: map[string]*context.CancelCauseFunc{}, asks: map[string]chan *message{}}
}

// track registers a relayed call under the client's request id; the
// returned func unregisters it.
func (rs *relayState) track(id json.RawMessage, cancel context.CancelCauseFunc) func() {
	k, p := string(id), &cancel
	rs.mu.Lock()
	rs.calls[k] = p
	rs.mu.Unlock()
	return func() {
		rs.mu.Lock()
		if rs.calls[k] == p {
			delete(rs.calls, k)
		}
		rs.mu.Unlock()
	}
}

// cancel handles the client's notifications/cancelled for a relayed call
// (202); false if the request is not one.
func (rs *relayState) cancel(w http.ResponseWriter, params json.RawMessage) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	rs.mu.Lock()
	c := rs.calls[string(p.RequestID)]
	rs.mu.Unlock()
	if c == nil {
		return false
	}
	(*c)(errClientCancelled)
	w.WriteHeader(http.StatusAccepted)
	return true
}

// await registers vmcp's id of a request sent to the client; forget ends it.
func (rs *relayState) await(id []byte) chan *message {
	ch := make(chan *message, 1)
	rs.mu.Lock()
	rs.asks[string(id)] = ch
	rs.mu.Unlock()
	return ch
}

func (rs *relayState) forget(id []byte) {
	rs.mu.Lock()
	delete(rs.asks, string(id))
	rs.mu.Unlock()
}

// answer takes the client's response to a relayed server-to-client
// request (202); false if it answers none.
func (rs *relayState) answer(w http.ResponseWriter, m *message) bool {
	rs.mu.Lock()
	ch := rs.asks[string(m.ID)]
	rs.mu.Unlock()
	if ch == nil {
		return false
	}
	select {
	case ch <- m:
	default: // answered twice: the first answer counts
	}
	w.WriteHeader(http.StatusAccepted)
	return true
}

// errWithdrawn ends a relayed server-to-client request the backend
// cancelled: it gets no response.
var errWithdrawn = errors.New("request cancelled by the backend")

// ask relays a backend's server-to-client request (elicitation, sampling,
// roots) to the client on the call's stream, under a vmcp id, and posts the
// client's answer back under the backend's id. It runs until answered, or
// until the call ends (the backend then gets an error, as from the go-sdk
// client, so a handler waiting on it returns) or the backend cancels it.
func (rs *relayStream) ask(m *message) {
	rs.mu.Lock()
	if rs.count >= maxRelayAsks {
		rs.mu.Unlock()
		rs.reply(rs.askCtx, m, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "too many server-to-client requests in flight for one call"})
		return
	}
	rs.count++
	ctx, cancel := context.WithCancelCause(rs.askCtx)
	rs.asks[string(m.ID)] = cancel
	rs.mu.Unlock()
	rs.wg.Add(1)
	go func() {
		defer rs.wg.Done()
		defer func() {
			cancel(nil)
			rs.mu.Lock()
			rs.count--
			delete(rs.asks, string(m.ID))
			rs.mu.Unlock()
		}()
		if err := rs.s.undeclaredMethod(m.Method); err != nil {
			rs.reply(ctx, m, nil, err)
			return
		}
		res, err := rs.relayToClient(ctx, m)
		if ctx.Err() == nil {
			rs.reply(ctx, m, res, err)
			return
		}
		if cause := context.Cause(ctx); cause != errWithdrawn {
			fctx, stop := context.WithTimeout(context.Background(), cancelFlush)
			defer stop()
			rs.reply(fctx, m, nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "request abandoned: " + cause.Error()})
		}
	}()
}

// relayToClient sends m to the client under a new id and waits for the
// answer: its raw result, or its error as a *jsonrpc.Error.
func (rs *relayStream) relayToClient(ctx context.Context, m *message) (json.RawMessage, error) {
	id := newRelayID()
	ch := rs.s.relayState.await(id)
	defer rs.s.relayState.forget(id)
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	b = append(b, `,"method":`...)
	b = appendJSONString(b, m.Method)
	if len(m.Params) > 0 {
		b = append(b, `,"params":`...)
		b = append(b, m.Params...)
	}
	if err := rs.out.send(append(b, '}')); err != nil {
		rs.s.d.undeliverable(m.Method, rs.s.id, rs.backend, err)
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "client unreachable: " + err.Error()}
	}
	select {
	case a := <-ch:
		if len(a.Error) > 0 {
			var we jsonrpc.Error
			if err := json.Unmarshal(a.Error, &we); err != nil {
				return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "client sent a malformed error"}
			}
			return nil, &we
		}
		return a.Result, nil
	case <-ctx.Done():
		n := append([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":`), id...)
		_ = rs.out.send(append(n, "}}"...)) // best effort: the stream may be gone
		return nil, ctx.Err()
	}
}

// reply posts the answer to the backend's request m on the backend session.
func (rs *relayStream) reply(ctx context.Context, m *message, res json.RawMessage, err error) {
	b := append([]byte(`{"jsonrpc":"2.0","id":`), m.ID...)
	if err != nil {
		b = append(b, `,"error":`...)
		b = append(b, wireError(err)...)
	} else {
		b = append(b, `,"result":`...)
		b = append(b, res...)
	}
	if perr := rs.raw.Notify(ctx, append(b, '}')); perr != nil && !errors.Is(perr, context.Canceled) {
		rs.s.d.undeliverable(m.Method+" response", rs.s.id, rs.backend, perr)
	}
}

// eventWriter writes JSON-RPC messages to a client's POST response as SSE
// events (streamable HTTP), each flushed at once; safe for concurrent use.
type eventWriter struct {
	mu      sync.Mutex
	w       http.ResponseWriter
	started bool
	closed  bool
	buf     []byte
}

var errStreamClosed = errors.New("the request's response stream has ended")

func newEventWriter(w http.ResponseWriter) *eventWriter { return &eventWriter{w: w} }

// send writes msg as one event; a message with line breaks is split into
// data lines.
func (e *eventWriter) send(msg []byte) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return errStreamClosed
	}
	if !e.started {
		h := e.w.Header()
		h["Content-Type"] = []string{"text/event-stream"}
		h["Cache-Control"] = []string{"no-cache, no-transform"}
		e.w.WriteHeader(http.StatusOK)
		e.started = true
	}
	e.buf = append(e.buf[:0], "event: message\n"...)
	for line := range bytes.Lines(msg) {
		e.buf = append(e.buf, "data: "...)
		e.buf = append(e.buf, bytes.TrimRight(line, "\r\n")...)
		e.buf = append(e.buf, '\n')
	}
	e.buf = append(e.buf, '\n')
	if _, err := e.w.Write(e.buf); err != nil {
		return err
	}
	return http.NewResponseController(e.w).Flush()
}

// respond writes the response to the client's request id: res (made fit
// for a Legacy client) or err. With no event sent before it, it is a JSON
// body (streamable HTTP allows either), sent at once.
func (e *eventWriter) respond(id, res json.RawMessage, err error) error {
	b := append([]byte(`{"jsonrpc":"2.0","id":`), id...)
	if err != nil {
		b = append(b, `,"error":`...)
		b = append(b, wireError(err)...)
	} else {
		b = append(b, `,"result":`...)
		b = append(b, legacyResult(res)...)
	}
	b = append(b, '}')
	e.mu.Lock()
	if e.started || e.closed {
		e.mu.Unlock()
		return e.send(b)
	}
	defer e.mu.Unlock()
	e.closed = true
	h := e.w.Header()
	h["Content-Type"] = []string{"application/json"}
	h["Content-Length"] = []string{strconv.Itoa(len(b))}
	e.w.WriteHeader(http.StatusOK)
	if _, err := e.w.Write(b); err != nil {
		return err
	}
	return http.NewResponseController(e.w).Flush()
}

// close ends the stream: later sends fail (the handler has returned).
func (e *eventWriter) close() {
	e.mu.Lock()
	e.closed = true
	e.mu.Unlock()
}

// modernResultKeys are result fields of 2026-07-28 only.
var modernResultKeys = []string{"resultType", "ttlMs", "cacheScope", "inputRequests", "requestState"}

// legacyResult is a backend result as a Legacy client receives it: no
// 2026-07-28-only fields and no reserved _meta keys of the backend. The
// common result (none of those keys anywhere) is returned unchanged.
func legacyResult(res json.RawMessage) json.RawMessage {
	if !bytes.Contains(res, []byte(`"_meta"`)) && !containsAny(res, modernResultKeys) {
		return res
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(res, &m) != nil {
		return res
	}
	for _, k := range modernResultKeys {
		delete(m, k)
	}
	if meta, ok := m["_meta"]; ok {
		if m["_meta"] = backends.ForwardMetaRaw(meta); m["_meta"] == nil {
			delete(m, "_meta")
		}
	}
	out, err := json.Marshal(m)
	if err != nil {
		return res
	}
	return out
}

func containsAny(b []byte, keys []string) bool {
	for _, k := range keys {
		if bytes.Contains(b, []byte(k)) {
			return true
		}
	}
	return false
}
