package backends

import (
	"context"
	"encoding/json"
	"log/slog"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// tapBackend is a Backend of transport whose undeliverable messages are
// recorded.
func tapBackend(transport string) (*Backend, *[]string) {
	b := &Backend{cfg: config.Backend{Name: "b", Transport: transport, URL: "http://x"}, log: slog.New(slog.DiscardHandler), ids: &ids{}}
	var missed []string
	f := func(method, _ string, _ error) { missed = append(missed, method) }
	b.onUndeliverable.Store(&f)
	return b, &missed
}

func notification(method, params string) *jsonrpc.Request {
	return &jsonrpc.Request{Method: method, Params: json.RawMessage(params)}
}

// TestControlTapCountsWhatNoRequestTook: the progress and logs that reach
// the control connection's tap (no request written on it took them) are
// undeliverable, counted once each; other notifications are not.
func TestControlTapCountsWhatNoRequestTook(t *testing.T) {
	b, missed := tapBackend(config.TransportStdio)
	b.controlTap(context.Background(), notification(mcpmsg.MethodLog, `{"level":"info","data":1}`))
	b.controlTap(context.Background(), notification(mcpmsg.MethodProgress, `{"progressToken":"x","progress":1}`))
	b.controlTap(context.Background(), notification(mcpmsg.MethodProgress, `{"progress":1}`))
	b.controlTap(context.Background(), notification("notifications/tools/list_changed", `{}`))
	assert.Equal(t, []string{mcpmsg.MethodLog, mcpmsg.MethodProgress, mcpmsg.MethodProgress}, *missed)
}

// TestConnMuxStdioLogLeaksToAnotherCall pins log attribution on a
// connection shared by many clients' requests (the control connection of
// a stdio or SSE backend, ControlConn), whose logs relate to no request:
// delivered to the only request in flight, and left to the tap (counted,
// never guessed) while several are; progress always by its token.
func TestConnMuxStdioLogLeaksToAnotherCall(t *testing.T) {
	m := newConnMux(&fakeConn{in: make(chan jsonrpc.Message)}, nil, true)
	ctx := context.Background()
	sole := func(id, tok string) *Exchange {
		e, err := m.startAs(&Exchange{m: m, id: id, sole: true, ctx: ctx, in: make(chan []byte, 1)}, tok)
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	log := `{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}`
	one := sole("vmcp-u1", "a")
	assert.Same(t, one, m.owner(decode(t, log)), "the only request in flight gets the log")
	two := sole("vmcp-u2", "b")
	assert.Nil(t, m.owner(decode(t, log)), "two in flight: the log goes to neither")
	assert.Same(t, two, m.owner(decode(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"b","progress":1}}`)))
	assert.Nil(t, m.owner(decode(t, `{"jsonrpc":"2.0","id":3,"method":"elicitation/create","params":{}}`)), "asks never reach a shared request")
	one.Close()
	assert.Same(t, two, m.owner(decode(t, log)), "alone again")
	two.Close()
	shared, err := m.start(ctx, "vmcp-u3", "", false) // a shared-process session's request (isolation: shared)
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Close()
	assert.Nil(t, m.owner(decode(t, log)), "a request not opened by ControlConn takes no logs")
}
