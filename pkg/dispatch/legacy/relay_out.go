package legacy

import (
	"bytes"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// What the relay writes to the client: its POST response as SSE events or
// one JSON body, and results made fit for a Legacy client.

// eventWriter is a relayed call's response to the client (wire.EventWriter)
// with results made fit for a Legacy client.
type eventWriter struct{ *wire.EventWriter }

var errStreamClosed = wire.ErrStreamClosed

func newEventWriter(w http.ResponseWriter) *eventWriter {
	return &eventWriter{wire.NewEventWriter(w)}
}

func (e *eventWriter) send(msg []byte) error { return e.Send(msg) }

// respond writes the response to the client's request id: res (made fit
// for a Legacy client) or err. With no event sent before it, it is a JSON
// body (streamable HTTP allows either), sent at once.
func (e *eventWriter) respond(id, res json.RawMessage, err error) error {
	if err != nil {
		return e.Final(http.StatusOK, wire.ErrorResponse(id, err))
	}
	return e.Final(http.StatusOK, wire.Response(id, legacyResult(res)))
}

// fail answers with an HTTP error status and a JSON-RPC error body, as
// the go-sdk handler answers an invalid request; after a first event it
// is an ordinary error response.
func (e *eventWriter) fail(status int, id json.RawMessage, err error) error {
	return e.Final(status, wire.ErrorResponse(id, err))
}

func (e *eventWriter) close() { e.Close() }

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
		fwd := mcpmsg.ForwardMetaRaw(meta)
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

// mutableWriter is the response writer of a request the go-sdk serves: once
// muted (the client cancelled the request) nothing more reaches the client.
type mutableWriter struct {
	http.ResponseWriter
	mu    sync.Mutex
	muted bool
}

func (m *mutableWriter) mute() {
	m.mu.Lock()
	m.muted = true
	m.mu.Unlock()
}

func (m *mutableWriter) isMuted() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.muted
}

// Write drops p once muted (reporting it written, so the go-sdk goes on).
func (m *mutableWriter) Write(p []byte) (int, error) {
	if m.isMuted() {
		return len(p), nil
	}
	return m.ResponseWriter.Write(p)
}

// Flush flushes what was written before the mute.
func (m *mutableWriter) Flush() {
	if f, ok := m.ResponseWriter.(http.Flusher); ok && !m.isMuted() {
		f.Flush()
	}
}

// Unwrap gives http.ResponseController the underlying writer.
func (m *mutableWriter) Unwrap() http.ResponseWriter { return m.ResponseWriter }
