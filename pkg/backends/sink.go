package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

// What a backend sends during one request (notifications/progress,
// notifications/message, asks) reaches that request through the call
// core's sender (pkg/upstream): on its own HTTP response stream, or taken
// off a stdio or SSE connection by its connMux (progress by the token the
// request sent, logs by connMux's rule). What reaches the control
// connection's tap instead belongs to no request: the Manager's
// OnUndeliverable handler counts and logs it.

// MethodProgress and MethodLog are the notifications a Sink receives.
const (
	MethodProgress = "notifications/progress"
	MethodLog      = "notifications/message"
)

// ProgressTokens mints the progress tokens one server's backends see
// instead of its clients' ("vmcp-progress-N"), so calls of many clients
// sharing a connection never collide; one per Manager (Manager.Tokens).
type ProgressTokens struct{ seq atomic.Int64 }

// Mint returns a token unique among this server's.
func (p *ProgressTokens) Mint() string {
	return mintedPrefix + strconv.FormatInt(p.seq.Add(1), 10)
}

// Unmatched is the error for progress carrying tok (TokenOf) that matches
// no call in flight: ErrProgressAfterEnd for a token this server minted
// before (its call ended), else ErrProgressUnknownToken.
func (p *ProgressTokens) Unmatched(tok string) error {
	if n, err := strconv.ParseInt(strings.TrimPrefix(tok, mintedPrefix), 10, 64); err == nil &&
		strings.HasPrefix(tok, mintedPrefix) && n > 0 && n <= p.seq.Load() {
		return fmt.Errorf("%w: token %s", ErrProgressAfterEnd, tok)
	}
	return fmt.Errorf("%w: token %s", ErrProgressUnknownToken, tok)
}

// controlTap takes the progress and log notifications of the control
// connection that no request written on it took (connMux): they reach no
// call, and are counted and logged as undeliverable.
func (b *Backend) controlTap(_ context.Context, msg *jsonrpc.Request) {
	switch msg.Method {
	case MethodProgress:
		tok, err := TokenOf(msg.Params)
		if err == nil {
			err = fmt.Errorf("no call in flight has it: %w", b.ids.tokens.Unmatched(tok))
		}
		b.undeliverable(msg.Method, err)
	case MethodLog:
		b.undeliverable(msg.Method, errors.New("the log message relates to no single call in flight"))
	}
}

// TokenOf returns the progressToken of raw progress params as compact JSON
// text (a string token with its quotes, a number as written).
func TokenOf(params json.RawMessage) (string, error) {
	var p struct {
		Token json.RawMessage `json:"progressToken"`
	}
	if err := json.Unmarshal(params, &p); err != nil {
		return "", fmt.Errorf("malformed progress notification: %w", err)
	}
	if t := bytes.TrimSpace(p.Token); len(t) == 0 || string(t) == "null" {
		return "", ErrProgressNoToken // belongs to no request; never matched to one
	}
	var s string
	if json.Unmarshal(p.Token, &s) == nil {
		return s, nil
	}
	return string(p.Token), nil
}

// OnUndeliverable sets the handler of a backend's messages that reach no
// call (a progress token no call in flight sent, a log relating to no
// single call, a notification on a direct call's stream with no Sink);
// unset, they are logged.
func (m *Manager) OnUndeliverable(f func(method, backend string, err error)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.onUndeliverable = &f
	for _, b := range m.list {
		b.onUndeliverable.Store(&f)
	}
}

func (b *Backend) undeliverable(method string, err error) {
	if f := b.onUndeliverable.Load(); f != nil {
		(*f)(method, b.Name(), err)
		return
	}
	b.log.Warn("message not delivered", "method", method, "error", err)
}

// RaiseLogLevel asks cs, a Legacy session on b, to send every log message
// (logging/setLevel "debug", within b's timeout) when the backend offers
// logging, so vmcp can filter per request by the level each Modern client
// asked for. Modern backends take the level per request: left alone.
func (b *Backend) RaiseLogLevel(ctx context.Context, cs *mcp.ClientSession) error {
	r := cs.InitializeResult()
	if r == nil || r.Capabilities == nil || r.Capabilities.Logging == nil || wire.IsModern(r.ProtocolVersion) {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, b.Timeout())
	defer cancel()
	return cs.SetLoggingLevel(ctx, &mcp.SetLoggingLevelParams{Level: "debug"})
}
