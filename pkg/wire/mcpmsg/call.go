// Package mcpmsg is MCP message semantics with no backend, session or
// transport in it: what a result, error, _meta or progress token means and
// how vmcp rewrites it (result and id checks, the cache guard's ttlMs rule,
// _meta forwarding, WireError, progress tokens and drop reasons,
// x-mcp-header schemas, LegacyResult). pkg/wire is how messages are framed.
package mcpmsg

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

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
