package backends

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// fakeConn is a connection whose Read returns the queued messages, then
// io.EOF; Write records what was written.
type fakeConn struct {
	in      chan jsonrpc.Message
	written []jsonrpc.Message
}

func (f *fakeConn) Read(context.Context) (jsonrpc.Message, error) {
	m, ok := <-f.in
	if !ok {
		return nil, io.EOF
	}
	return m, nil
}
func (f *fakeConn) Write(_ context.Context, m jsonrpc.Message) error {
	f.written = append(f.written, m)
	return nil
}
func (f *fakeConn) Close() error      { return nil }
func (f *fakeConn) SessionID() string { return "" }

func decode(t *testing.T, s string) jsonrpc.Message {
	t.Helper()
	m, err := jsonrpc.DecodeMessage([]byte(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestConnMuxRoutes: a connMux hands each Exchange its response, its
// progress, and (own requests only) logs, asks, to the oldest in flight,
// and the backend's withdrawal of an ask to the request the ask went to;
// everything else, and a late response, never reaches an Exchange.
func TestConnMuxRoutes(t *testing.T) {
	f := &fakeConn{in: make(chan jsonrpc.Message, 16)}
	m := newConnMux(f, nil, true)
	ctx := context.Background()
	shared, _ := m.start(ctx, "vmcp-u1", "s", false)
	older, _ := m.start(ctx, "vmcp-u2", "a", true)
	newer, _ := m.start(ctx, "vmcp-u3", "b", true)
	msgs := []struct {
		msg  string
		want *Exchange // nil: the go-sdk client
	}{
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"b","progress":1}}`, newer},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"s","progress":1}}`, shared},
		{`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"x","progress":1}}`, nil},
		{`{"jsonrpc":"2.0","method":"notifications/message","params":{"level":"info","data":1}}`, older},
		{`{"jsonrpc":"2.0","id":7,"method":"elicitation/create","params":{"message":"?"}}`, older},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}`, older},
		{`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":8}}`, nil},
		{`{"jsonrpc":"2.0","id":1,"result":{}}`, nil}, // the go-sdk client's own call
		{`{"jsonrpc":"2.0","id":"vmcp-u3","result":{}}`, newer},
		{`{"jsonrpc":"2.0","id":"vmcp-u9","result":{}}`, dropped},
	}
	for _, tc := range msgs {
		got := m.owner(decode(t, tc.msg))
		if got != tc.want {
			t.Fatalf("%s went to %p, want %p", tc.msg, got, tc.want)
		}
	}
	older.Close()
	if got := m.owner(decode(t, `{"jsonrpc":"2.0","id":9,"method":"roots/list"}`)); got != nil {
		t.Fatalf("an ask with only a shared request in flight went to %p", got)
	}
	if len(m.asks) != 0 || len(m.byID) != 1 {
		t.Fatalf("%d asks and %d requests left", len(m.asks), len(m.byID))
	}
}

// TestConnMuxDeliversInOrderThenEnds: Read hands an Exchange its messages
// in order and returns the others; the connection's end fails its Next
// naming it.
func TestConnMuxDeliversInOrderThenEnds(t *testing.T) {
	f := &fakeConn{in: make(chan jsonrpc.Message, 16)}
	m := newConnMux(f, nil, false)
	e, err := m.start(context.Background(), "vmcp-u1", "a", true)
	if err != nil {
		t.Fatal(err)
	}
	f.in <- decode(t, `{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"a","progress":1}}`)
	f.in <- decode(t, `{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}`)
	f.in <- decode(t, `{"jsonrpc":"2.0","id":"vmcp-u1","result":{"ok":true}}`)
	close(f.in)
	go func() {
		for {
			if _, err := m.Read(context.Background()); err != nil {
				return
			}
		}
	}()
	for _, want := range []string{`"progress":1`, `"ok":true`} {
		data, err := e.Next()
		if err != nil || !strings.Contains(string(data), want) {
			t.Fatalf("got %s, %v; want %s", data, err, want)
		}
	}
	if _, err := e.Next(); err == nil || !strings.Contains(err.Error(), "connection ended") {
		t.Fatalf("after the end: %v", err)
	}
	if _, err := m.start(context.Background(), "vmcp-u2", "", true); err == nil {
		t.Fatal("a request started on an ended connection")
	}
}
