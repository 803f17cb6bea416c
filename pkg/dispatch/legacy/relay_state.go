package legacy

import (
	"context"
	"encoding/json"
	"net/http"
	"sync"

	"github.com/vmcp/vmcp/pkg/wire"
)

// relayState is a client session's relayed calls, by the client's request
// id (for notifications/cancelled and to refuse a duplicate in-flight id),
// and its relayed server-to-client requests awaiting the client's answer,
// by vmcp's id. Ids are keyed by value (wire.IDKey), as JSON-RPC compares them.
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

// backendKey keys a backend's request id (always a string or number).
func backendKey(raw json.RawMessage) string {
	k, _ := wire.IDKey(raw)
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
	key, ok := wire.IDKey(p.RequestID)
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
	if !rs.deliver(key, m) {
		return false
	}
	w.WriteHeader(http.StatusAccepted)
	return true
}

// deliver hands the client's answer m to the relayed request key waits
// on; false if none does.
func (rs *relayState) deliver(key string, m *message) bool {
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
	return true
}
