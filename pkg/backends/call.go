package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

// drainGrace is how long a finished call's context stays alive so the SDK
// client can drain the rest of the backend's SSE response and keep the HTTP
// connection for reuse (cancelling at once closes it about one call in five).
const drainGrace = 2 * time.Second

// CallContext derives the context of one backend call from the client's
// request context: bounded by timeout, cancelled if the client cancels while
// the call is in flight (the SDK then sends notifications/cancelled), and
// kept alive briefly after done() so the response stream drains.
func CallContext(front context.Context, timeout time.Duration) (ctx context.Context, done func()) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(front), timeout)
	stop := context.AfterFunc(front, cancel)
	return ctx, func() {
		stop()
		time.AfterFunc(drainGrace, cancel)
	}
}

// reservedMetaPrefix marks _meta keys owned by the protocol itself; they are
// per hop and never copied from the client to a backend.
const reservedMetaPrefix = "io.modelcontextprotocol/"

// ForwardMeta returns the client's request _meta as sent to a backend: every
// key except the protocol's reserved io.modelcontextprotocol/* keys (which
// would make a Legacy backend switch revision). It returns nil for no keys.
func ForwardMeta(m mcp.Meta) mcp.Meta {
	if len(m) == 0 {
		return nil
	}
	out := make(mcp.Meta, len(m))
	for k, v := range m {
		if !strings.HasPrefix(k, reservedMetaPrefix) {
			out[k] = v
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// ForwardMetaRaw is ForwardMeta on raw _meta JSON: m unchanged when it has
// no reserved key (or is not an object), nil when nothing is left. Bytes
// with an escape are decoded first (a key may spell the prefix escaped).
func ForwardMetaRaw(m json.RawMessage) json.RawMessage {
	if !bytes.Contains(m, []byte(reservedMetaPrefix)) && bytes.IndexByte(m, '\\') < 0 {
		return m
	}
	var keys map[string]json.RawMessage
	if json.Unmarshal(m, &keys) != nil {
		return m
	}
	n := len(keys)
	for k := range keys {
		if strings.HasPrefix(k, reservedMetaPrefix) {
			delete(keys, k)
		}
	}
	if len(keys) == n {
		return m
	}
	if len(keys) == 0 {
		return nil
	}
	out, err := json.Marshal(keys)
	if err != nil {
		return m
	}
	return out
}

// WireError converts a backend call failure into the JSON-RPC error the
// client receives: a backend's own JSON-RPC error keeps its code and data
// (one without a code becomes -32603, one without a message says so),
// anything else becomes -32603; the message always names the backend.
func WireError(backend string, err error) error {
	prefix := fmt.Sprintf("backend %q: ", backend)
	var we *jsonrpc.Error
	if errors.As(err, &we) {
		if strings.HasPrefix(we.Message, prefix) || strings.HasPrefix(we.Message, prefix[:len(prefix)-2]+" answered ") {
			return we // already names the backend (ResultError's too)
		}
		switch {
		case we.Code == 0: // "error": {} or a message alone: not a JSON-RPC error object
			return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: prefix + "answered with an error without a code" + quoted(we.Message), Data: we.Data}
		case we.Message == "":
			return &jsonrpc.Error{Code: we.Code, Message: fmt.Sprintf("%sanswered with error %d without a message", prefix, we.Code), Data: we.Data}
		}
		return &jsonrpc.Error{Code: we.Code, Message: prefix + we.Message, Data: we.Data}
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: fmt.Sprintf("backend %q: timed out", backend)}
	}
	msg := err.Error()
	if !strings.HasPrefix(msg, prefix) {
		msg = prefix + msg
	}
	return &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
}

// quoted is ": " and msg quoted, or "" for no message.
func quoted(msg string) string {
	if msg == "" {
		return ""
	}
	return ": " + wire.Quote(msg)
}
