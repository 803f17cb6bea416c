package backends

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/wire"
)

// Per-call sinks: what a backend sends during one call and related to it
// (notifications/progress, notifications/message) goes to the Sink of that
// call, in the order it was read off the wire and before the call's result
// is returned (taps read ahead of the go-sdk client; direct calls read their
// own stream). Attribution by transport:
//   - a direct POST (direct.go): everything on its response stream;
//   - a go-sdk session over streamable HTTP: the tap sees each SSE event
//     with the HTTP request's context, which carries the call's Sink
//     (WithSink), so logs follow their request's stream;
//   - progress on a connection shared by many clients (the control
//     connection): by a vmcp-minted token unique to the call (Attach);
//   - logs over stdio or SSE, which relate to no request on the wire: to
//     the only attached call on that backend's control connection, and
//     undeliverable when several are in flight (never to the wrong one).
// Whatever finds no Sink goes to the Manager.OnUndeliverable handler (the
// Modern dispatcher logs and counts it).

// MethodProgress and MethodLog are the notifications a Sink receives.
const (
	MethodProgress = "notifications/progress"
	MethodLog      = "notifications/message"
)

// Sink receives the notifications/progress and notifications/message a
// backend sends during one call. params are the backend's raw params (a
// progress token is the one vmcp sent, ProgressToken). Notify runs on the
// reader of the backend's stream: it must not block for long.
type Sink interface {
	Notify(method string, params json.RawMessage)
}

type sinkKey struct{}

// WithSink returns ctx carrying the Sink of one backend call; the taps of
// HTTP backend sessions find it on the call's HTTP requests.
func WithSink(ctx context.Context, s Sink) context.Context {
	return context.WithValue(ctx, sinkKey{}, s)
}

func sinkFrom(ctx context.Context) Sink {
	s, _ := ctx.Value(sinkKey{}).(Sink)
	return s
}

// progressSeq numbers the progress tokens vmcp mints.
var progressSeq atomic.Int64

// ProgressToken mints a progress token unique in this process: the token a
// backend sees instead of the client's, so calls of many clients sharing a
// connection never collide.
func ProgressToken() string {
	return mintedPrefix + strconv.FormatInt(progressSeq.Add(1), 10)
}

// calls routes what one backend's control connection receives: progress
// by minted token, stdio/SSE logs to the backend's only attached call.
type calls struct {
	mu      sync.Mutex
	byToken map[string]Sink
	active  map[*attachment]struct{} // calls in flight
}

type attachment struct{ sink Sink }

// Attach routes what b's control connection receives for one call to s
// until release: progress carrying token (from ProgressToken; "" for none)
// and, over stdio or SSE, logs while this is b's only call in flight.
func (b *Backend) Attach(s Sink, token string) (release func()) {
	a := &attachment{sink: s}
	c := &b.calls
	c.mu.Lock()
	if c.byToken == nil {
		c.byToken, c.active = map[string]Sink{}, map[*attachment]struct{}{}
	}
	if token != "" {
		c.byToken[token] = s
	}
	c.active[a] = struct{}{}
	c.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			c.mu.Lock()
			defer c.mu.Unlock()
			if token != "" {
				delete(c.byToken, token)
			}
			delete(c.active, a)
		})
	}
}

// byToken is the Sink of the call that sent progress token tok, or nil.
func (b *Backend) byToken(tok string) Sink {
	b.calls.mu.Lock()
	defer b.calls.mu.Unlock()
	return b.calls.byToken[tok]
}

// loneCall is the Sink of b's only attached call, or nil.
func (b *Backend) loneCall() Sink {
	b.calls.mu.Lock()
	defer b.calls.mu.Unlock()
	if len(b.calls.active) != 1 {
		return nil
	}
	for a := range b.calls.active {
		return a.sink
	}
	return nil
}

// controlTap routes the progress and log notifications of the control
// connection (shared by every Modern client) to their calls' Sinks.
func (b *Backend) controlTap(ctx context.Context, msg *jsonrpc.Request) {
	switch msg.Method {
	case MethodProgress:
		tok, err := TokenOf(msg.Params)
		if err != nil {
			b.undeliverable(msg.Method, err)
			return
		}
		s := b.byToken(tok)
		if s == nil {
			b.undeliverable(msg.Method, fmt.Errorf("no call in flight has it: %w", UnmatchedProgress(tok)))
			return
		}
		s.Notify(msg.Method, msg.Params)
	case MethodLog:
		s := sinkFrom(ctx)
		if s == nil && !b.isHTTP() && !b.sharedProcess() { // shared: Legacy calls run unattached
			s = b.loneCall()
		}
		if s == nil {
			b.undeliverable(msg.Method, errors.New("the log message relates to no single call in flight"))
			return
		}
		s.Notify(msg.Method, msg.Params)
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
