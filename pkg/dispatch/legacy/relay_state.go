package legacy

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"net/http"
	"strconv"
	"sync"
)

// relayState is a client session's relayed calls, by the client's request
// id (for notifications/cancelled and to refuse a duplicate in-flight id),
// and its relayed server-to-client requests awaiting the client's answer,
// by vmcp's id. Ids are keyed by value (idKey), as JSON-RPC compares them.
type relayState struct {
	mu    sync.Mutex
	calls map[string]tracked
	asks  map[string]chan *message
}

// tracked is one in-flight request of the session: a relayed call's
// cancel, or, for one the go-sdk serves, mute, which silences its response
// stream once the client cancelled it (the go-sdk would still answer).
type tracked struct {
	cancel context.CancelCauseFunc
	mute   func()
}

func newRelayState() *relayState {
	return &relayState{calls: map[string]tracked{}, asks: map[string]chan *message{}}
}

// idKey is the value of a JSON-RPC request id as a map key: "s" + the
// string, or "n" + the number in canonical form (7, 7.0 and 7e0 are one
// id). ok is false for an id that is absent, null or not a string or
// number (JSON-RPC 2.0: an id is a string or a number).
func idKey(raw json.RawMessage) (key string, ok bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "", false
	}
	switch c := raw[0]; {
	case c == '"':
		if bytes.IndexByte(raw, '\\') < 0 {
			return "s" + string(raw[1:len(raw)-1]), len(raw) >= 2 && raw[len(raw)-1] == '"'
		}
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return "", false
		}
		return "s" + s, true
	case c == '-' || c >= '0' && c <= '9':
		if i, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
			return "n" + strconv.FormatInt(i, 10), true
		}
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil || !json.Valid(raw) {
			return "", false
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<62 {
			return "n" + strconv.FormatInt(int64(f), 10), true
		}
		return "n" + strconv.FormatFloat(f, 'g', -1, 64), true
	}
	return "", false
}

// backendKey keys a backend's request id (always a string or number).
func backendKey(raw json.RawMessage) string {
	k, _ := idKey(raw)
	return k
}

// track registers a call under the client's request id; the returned func
// unregisters it. ok is false if a request with that id is already in
// flight in this session, on either path.
func (rs *relayState) track(key string, t tracked) (untrack func(), ok bool) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if _, dup := rs.calls[key]; dup {
		return nil, false
	}
	rs.calls[key] = t
	return func() {
		rs.mu.Lock()
		delete(rs.calls, key)
		rs.mu.Unlock()
	}, true
}

// cancel handles the client's notifications/cancelled for a relayed call
// (202); false if the request is not one. A call the go-sdk serves is
// muted (no response reaches the client: the receiver of a cancellation
// SHOULD NOT respond) and the notification left to the go-sdk, which
// cancels its handler.
func (rs *relayState) cancel(w http.ResponseWriter, params json.RawMessage) bool {
	var p struct {
		RequestID json.RawMessage `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return false
	}
	key, ok := idKey(p.RequestID)
	if !ok {
		return false
	}
	rs.mu.Lock()
	t := rs.calls[key]
	rs.mu.Unlock()
	if t.mute != nil {
		t.mute()
	}
	if t.cancel == nil { // not in flight, or the go-sdk's
		return false
	}
	t.cancel(errClientCancelled)
	w.WriteHeader(http.StatusAccepted)
	return true
}

// await registers vmcp's id of a request sent to the client; forget ends it.
func (rs *relayState) await(id []byte) chan *message {
	ch := make(chan *message, 1)
	rs.mu.Lock()
	rs.asks[backendKey(id)] = ch
	rs.mu.Unlock()
	return ch
}

func (rs *relayState) forget(id []byte) {
	rs.mu.Lock()
	delete(rs.asks, backendKey(id))
	rs.mu.Unlock()
}

// answer takes the client's response to a relayed server-to-client
// request (202); false if it answers none.
func (rs *relayState) answer(w http.ResponseWriter, key string, m *message) bool {
	rs.mu.Lock()
	ch := rs.asks[key]
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
