package backends

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends/transport"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// connMux shares one go-sdk connection (stdio, SSE) between the go-sdk
// client and the requests the call core writes on it raw (ConnSession).
// Its Read takes out what belongs to such a request and hands it to that
// request's Exchange: the response to its id ("vmcp-u<n>": never one of
// the go-sdk client's integer ids), progress with its progressToken, and,
// on a session owned by one client, log messages and server-to-client
// requests (elicitation, sampling, roots) while it is in flight; those go
// to the oldest request in flight (the rule of one stream per connection:
// nothing tells which request a backend's ask belongs to); a Modern
// listen's notifications (subscriptionOf) go to that listen. Everything else
// goes on to the Tap and the go-sdk client. A full Exchange stops Read
// (backpressure on the backend) until the request's context ends.
type connMux struct {
	mcp.Connection
	tap  transport.Tap
	logs bool

	mu     sync.Mutex
	byID   map[string]*Exchange
	tokens map[string]*Exchange
	asks   map[jsonrpc.ID]*Exchange // asks handed to an Exchange and not answered
	order  []*Exchange              // in flight, oldest first
	err    error                    // the connection's end
	closed chan struct{}
}

func newConnMux(c mcp.Connection, tap transport.Tap, logs bool) *connMux {
	return &connMux{Connection: c, tap: tap, logs: logs, byID: map[string]*Exchange{},
		tokens: map[string]*Exchange{}, asks: map[jsonrpc.ID]*Exchange{}, closed: make(chan struct{})}
}

// Exchange is one request written raw on a connection: Next yields the
// backend's messages for it, the response last.
type Exchange struct {
	m     *connMux
	id    string
	token string // "": none (or not routed: another request has it)
	own   bool   // logs and asks may go to it
	sole  bool   // logs may go to it while it is the only request in flight
	ctx   context.Context
	in    chan []byte // capacity 1: the mux blocks on a full one
}

// Read returns the next message for the go-sdk client, after handing the
// ones that belong to an Exchange to it.
func (c *connMux) Read(ctx context.Context) (jsonrpc.Message, error) {
	for {
		msg, err := c.Connection.Read(ctx)
		if err != nil {
			c.end(err)
			return msg, err
		}
		if e := c.owner(msg); e != nil {
			e.deliver(ctx, msg)
			continue
		}
		if r, ok := msg.(*jsonrpc.Request); ok && c.tap != nil && transport.Tapped(r.Method, c.logs) {
			c.tap(context.Background(), r)
		}
		return msg, nil
	}
}

// ownedPrefix marks the ids of the requests written raw (upstream's).
const ownedPrefix = "vmcp-u"

// owner is the Exchange msg belongs to, or nil for the go-sdk client. A
// response to an Exchange ends it; one to an id no longer in flight (a
// request given up) is dropped.
func (c *connMux) owner(msg jsonrpc.Message) *Exchange {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch m := msg.(type) {
	case *jsonrpc.Response:
		id, ok := m.ID.Raw().(string)
		if !ok || !strings.HasPrefix(id, ownedPrefix) {
			return nil
		}
		e := c.byID[id]
		if e == nil {
			return dropped
		}
		c.remove(e)
		return e
	case *jsonrpc.Request:
		return c.ownerOf(m)
	}
	return nil
}

// dropped takes a late response to a request given up.
var dropped = &Exchange{}

// ownerOf is the Exchange of a notification or server-to-client request
// (under mu).
func (c *connMux) ownerOf(r *jsonrpc.Request) *Exchange {
	switch r.Method {
	case mcpmsg.MethodProgress:
		if tok, err := mcpmsg.TokenOf(r.Params); err == nil {
			return c.tokens[tok]
		}
	case mcpmsg.MethodLog:
		if e := c.oldestOwn(); e != nil {
			return e
		}
		return c.only()
	case methodCancelled: // the backend withdrew an ask: to the request it went to
		return c.asks[cancelledID(r.Params)]
	case "elicitation/create", "sampling/createMessage", "roots/list":
		if e := c.oldestOwn(); e != nil && r.ID.IsValid() {
			c.asks[r.ID] = e
			return e
		}
	default: // a Modern listen's notifications carry its request id
		if id := subscriptionOf(r); id != "" {
			return c.byID[id]
		}
	}
	return nil
}

// subscriptionOf is the listen request id a notification names in
// _meta[mcp.MetaKeySubscriptionID] when it is one of ours ("vmcp-u<n>"),
// else "".
func subscriptionOf(r *jsonrpc.Request) string {
	if r.ID.IsValid() || !strings.HasPrefix(r.Method, "notifications/") {
		return ""
	}
	var p struct {
		Meta map[string]any `json:"_meta"`
	}
	if json.Unmarshal(r.Params, &p) != nil {
		return ""
	}
	id, _ := p.Meta[mcp.MetaKeySubscriptionID].(string)
	if !strings.HasPrefix(id, ownedPrefix) {
		return ""
	}
	return id
}

const methodCancelled = "notifications/cancelled"

// cancelledID is the requestId of notifications/cancelled params (the
// zero ID when there is none).
func cancelledID(params json.RawMessage) jsonrpc.ID {
	var p struct {
		RequestID any `json:"requestId"`
	}
	if json.Unmarshal(params, &p) != nil {
		return jsonrpc.ID{}
	}
	id, _ := jsonrpc.MakeID(p.RequestID)
	return id
}

// answered forgets the ask id once answered (an answer is written).
func (c *connMux) answered(id jsonrpc.ID) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.asks, id)
}

// oldestOwn is the oldest Exchange in flight that may take logs and asks.
func (c *connMux) oldestOwn() *Exchange {
	for _, e := range c.order {
		if e.own {
			return e
		}
	}
	return nil
}

// only is the one Exchange in flight when it may take the logs of a
// connection shared by many clients (sole), else nil: a log relates to no
// request on the wire, so with several in flight it goes to none (never
// to the wrong one).
func (c *connMux) only() *Exchange {
	if len(c.order) == 1 && c.order[0].sole {
		return c.order[0]
	}
	return nil
}

// deliver hands msg to e, waiting while e is full, until e's request or
// the read ends.
func (e *Exchange) deliver(ctx context.Context, msg jsonrpc.Message) {
	if e == dropped {
		return
	}
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return
	}
	select {
	case e.in <- data:
	case <-e.ctx.Done():
	case <-ctx.Done():
	}
}

// end records the connection's end: Exchanges in flight fail with err.
func (c *connMux) end(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err == nil {
		c.err = err
		close(c.closed)
	}
}

// start registers a request with id (a string beginning "vmcp-u") and
// progress token tok ("" none) before it is written; ctx ends it.
func (c *connMux) start(ctx context.Context, id, tok string, own bool) (*Exchange, error) {
	return c.startAs(&Exchange{m: c, id: id, own: own, ctx: ctx, in: make(chan []byte, 1)}, tok)
}

// startAs is start for e, built by the caller.
func (c *connMux) startAs(e *Exchange, tok string) (*Exchange, error) {
	id := e.id
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.err != nil {
		return nil, c.err
	}
	if _, dup := c.byID[id]; dup {
		return nil, errors.New("request id " + id + " already in flight")
	}
	c.byID[id] = e
	if _, taken := c.tokens[tok]; tok != "" && !taken {
		e.token, c.tokens[tok] = tok, e
	}
	c.order = append(c.order, e)
	return e, nil
}

// remove takes e out of the request maps (under mu).
func (c *connMux) remove(e *Exchange) {
	if c.byID[e.id] != e {
		return
	}
	delete(c.byID, e.id)
	if e.token != "" {
		delete(c.tokens, e.token)
	}
	for i, o := range c.order {
		if o == e {
			c.order = append(c.order[:i], c.order[i+1:]...)
			break
		}
	}
	for id, o := range c.asks {
		if o == e {
			delete(c.asks, id)
		}
	}
}

// Next returns the next message of the request (owned by the caller): its
// notifications and asks, then its response. It fails when the request's
// context ends or the connection does.
func (e *Exchange) Next() ([]byte, error) {
	select {
	case data := <-e.in:
		return data, nil
	case <-e.ctx.Done():
		return nil, context.Cause(e.ctx)
	case <-e.m.closed:
		select {
		case data := <-e.in: // read before the end
			return data, nil
		default:
		}
		return nil, fmt.Errorf("the connection ended: %w", e.m.err)
	}
}

// Close ends the request's part in the connection: what the backend sends
// for it later is dropped (a response) or goes to the go-sdk client.
func (e *Exchange) Close() {
	e.m.mu.Lock()
	defer e.m.mu.Unlock()
	e.m.remove(e)
}

// tapTransportConn wraps a non-HTTP transport (stdio, SSE) so its
// connection is a connMux: the requests the call core writes raw get
// their messages (connmux.go), and the Tap sees the rest before the SDK.
type tapTransportConn struct {
	mcp.Transport
	tap    transport.Tap // may be nil
	logs   bool
	onConn func(*connMux) // may be nil: told the connection once made
}

func (t *tapTransportConn) Connect(ctx context.Context) (mcp.Connection, error) {
	c, err := t.Transport.Connect(ctx)
	if err != nil {
		return nil, err
	}
	m := newConnMux(c, t.tap, t.logs)
	if t.onConn != nil {
		t.onConn(m)
	}
	return m, nil
}
