// Package mrtr carries vmcp's side of multi round-trip requests (MCP
// 2026-07-28 "input_required" results): the integrity-protected
// requestState vmcp hands to clients, and the parked backend calls that a
// Legacy backend's server-to-client request (elicitation/create,
// sampling/createMessage, roots/list) turns into input_required rounds for
// a Modern client.
package mrtr

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vmcp/vmcp/pkg/identity"
)

// ErrInvalidState is wrapped by every requestState that does not verify or
// decode: tampered, minted under another key, truncated or malformed.
// Dispatchers answer it with -32602.
var ErrInvalidState = errors.New("invalid requestState")

// MaxStateLen bounds an accepted requestState (before any decoding work).
const MaxStateLen = 1 << 20

// State is what vmcp seals into the requestState of an input_required
// result it returns: which request it belongs to and where a retry goes.
type State struct {
	// Method is tools/call, prompts/get or resources/read; Name is the
	// advertised tool or prompt name, or the resource URI, the client used.
	// A retry must repeat both.
	Method string `json:"m"`
	Name   string `json:"n"`
	// Backend is the backend the round belongs to.
	Backend string `json:"b"`

	// Forwarded (a Modern backend's own input_required): Target is the
	// backend's original name or URI and Inner its requestState ("" when it
	// sent none), handed back to it unchanged on retry.
	Target string `json:"t,omitempty"`
	Inner  string `json:"i,omitempty"`

	// Parked (a Legacy backend's call waiting for this client): Node owns
	// the call ("" for a single node), Call is its ID and Round the round
	// this state answers.
	Parked bool   `json:"p,omitempty"`
	Node   string `json:"o,omitempty"`
	Call   string `json:"c,omitempty"`
	Round  int    `json:"r,omitempty"`

	// Owner is the principal the state was issued to
	// (identity.Principal.Tag; "" anonymous): see For and OpenFor.
	Owner string `json:"w,omitempty"`
}

// For returns s bound to principal p: sealed, it opens only with OpenFor
// and p (a retry presented by another principal is refused).
func (s State) For(p identity.Principal) State {
	s.Owner = p.Tag()
	return s
}

const tagLen = 32 // full HMAC-SHA256

var enc = base64.RawURLEncoding.Strict()

// Codec seals and opens requestState values with HMAC-SHA256 under a key
// derived from the server's state key, so they cannot be confused with
// other tokens minted under the same key (list cursors). It is safe for
// concurrent use.
type Codec struct{ key []byte }

// NewCodec returns a Codec for key (at least 32 bytes; shorter is a
// programming error and panics).
func NewCodec(key []byte) *Codec {
	if len(key) < 32 {
		panic(fmt.Sprintf("mrtr: state key is %d bytes, need at least 32", len(key)))
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("vmcp requestState v1"))
	return &Codec{key: m.Sum(nil)}
}

func (c *Codec) tag(payload []byte) []byte {
	m := hmac.New(sha256.New, c.key)
	m.Write(payload)
	return m.Sum(nil)
}

// Seal returns the opaque requestState for s: base64url(JSON) "." base64url(tag).
func (c *Codec) Seal(s State) string {
	payload, err := json.Marshal(s)
	if err != nil {
		panic("mrtr: State does not marshal: " + err.Error()) // strings and ints only
	}
	return enc.EncodeToString(payload) + "." + enc.EncodeToString(c.tag(payload))
}

// Open verifies and decodes a requestState minted by Seal under the same
// key; any failure wraps ErrInvalidState.
func (c *Codec) Open(token string) (State, error) {
	if len(token) > MaxStateLen {
		return State{}, fmt.Errorf("%w: longer than %d bytes", ErrInvalidState, MaxStateLen)
	}
	p64, t64, ok := bytes.Cut([]byte(token), []byte{'.'})
	if !ok {
		return State{}, fmt.Errorf("%w: not minted by this server", ErrInvalidState)
	}
	payload, err1 := enc.DecodeString(string(p64))
	tag, err2 := enc.DecodeString(string(t64))
	if err1 != nil || err2 != nil || len(tag) != tagLen {
		return State{}, fmt.Errorf("%w: not minted by this server", ErrInvalidState)
	}
	if !hmac.Equal(tag, c.tag(payload)) {
		return State{}, fmt.Errorf("%w: failed its integrity check (tampered or minted by another key)", ErrInvalidState)
	}
	var s State
	if err := json.Unmarshal(payload, &s); err != nil {
		return State{}, fmt.Errorf("%w: malformed", ErrInvalidState)
	}
	return s, nil
}

// OpenFor is Open for a retry presented by principal p: a state issued
// to another principal (State.For) fails wrapping ErrInvalidState.
func (c *Codec) OpenFor(token string, p identity.Principal) (State, error) {
	s, err := c.Open(token)
	if err == nil && s.Owner != p.Tag() {
		return State{}, fmt.Errorf("%w: issued to another principal", ErrInvalidState)
	}
	return s, err
}

// Belongs reports whether s was minted for a request of method on name.
func (s State) Belongs(method, name string) bool { return s.Method == method && s.Name == name }
