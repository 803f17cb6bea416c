package legacy

import (
	"bytes"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"sync"

	"github.com/vmcp/vmcp/pkg/backends"
)

// What the relay writes to the client: its POST response as SSE events or
// one JSON body, and results made fit for a Legacy client.

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
	if err == nil {
		res = legacyResult(res)
	}
	b := responseBody(id, res, err)
	e.mu.Lock()
	if e.started || e.closed {
		e.mu.Unlock()
		defer e.close() // nothing follows the response on its stream
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

// fail answers with an HTTP error status and a JSON-RPC error body, as
// the go-sdk handler answers an invalid request; after a first event it
// is an ordinary error response.
func (e *eventWriter) fail(status int, id json.RawMessage, err error) error {
	e.mu.Lock()
	if e.started || e.closed {
		e.mu.Unlock()
		return e.respond(id, nil, err)
	}
	defer e.mu.Unlock()
	e.closed = true
	b := responseBody(id, nil, err)
	e.w.Header()["Content-Type"] = []string{"application/json"}
	e.w.WriteHeader(status)
	_, werr := e.w.Write(b)
	return werr
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
// 2026-07-28-only fields and no reserved _meta keys of the backend. A
// result that cannot hold any (no such key and no escape anywhere in its
// bytes) is returned unchanged without decoding, as is one that holds none.
func legacyResult(res json.RawMessage) json.RawMessage {
	if bytes.IndexByte(res, '\\') < 0 && !bytes.Contains(res, []byte(`"_meta"`)) && !containsAny(res, modernResultKeys) {
		return res
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(res, &m) != nil {
		return res
	}
	changed := false
	for _, k := range modernResultKeys {
		if _, ok := m[k]; ok {
			delete(m, k)
			changed = true
		}
	}
	if meta, ok := m["_meta"]; ok {
		fwd := backends.ForwardMetaRaw(meta)
		changed = changed || !bytes.Equal(fwd, meta)
		if m["_meta"] = fwd; fwd == nil {
			delete(m, "_meta")
		}
	}
	if !changed {
		return res
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
