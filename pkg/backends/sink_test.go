package backends

import (
	"context"
	"encoding/json"
	"log/slog"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/stretchr/testify/assert"
	"github.com/vmcp/vmcp/pkg/config"
)

// recSink records what a call's Sink receives.
type recSink struct {
	mu   sync.Mutex
	msgs []string
}

func (r *recSink) Notify(method string, params json.RawMessage) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.msgs = append(r.msgs, method+" "+string(params))
}

func (r *recSink) got() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.msgs
}

// tapBackend is a Backend of transport whose undeliverable messages are
// recorded.
func tapBackend(transport string) (*Backend, *[]string) {
	b := &Backend{cfg: config.Backend{Name: "b", Transport: transport, URL: "http://x"}, log: slog.New(slog.DiscardHandler)}
	var missed []string
	f := func(method, _ string, _ error) { missed = append(missed, method) }
	b.onUndeliverable.Store(&f)
	return b, &missed
}

func notification(method, params string) *jsonrpc.Request {
	return &jsonrpc.Request{Method: method, Params: json.RawMessage(params)}
}

// TestControlTapStdioLogLeaksToAnotherCall pins log attribution on a
// transport whose logs relate to no request (stdio, SSE): delivered to the
// only call in flight, and undeliverable (counted, never guessed) while
// several are; progress always by its minted token.
func TestControlTapStdioLogLeaksToAnotherCall(t *testing.T) {
	b, missed := tapBackend(config.TransportStdio)
	one, two := &recSink{}, &recSink{}
	tok := ProgressToken()
	release := b.Attach(one, tok)
	b.controlTap(context.Background(), notification(MethodLog, `{"level":"info","data":1}`))
	assert.Len(t, one.got(), 1, "the only call in flight gets the log")

	release2 := b.Attach(two, "")
	b.controlTap(context.Background(), notification(MethodLog, `{"level":"info","data":2}`))
	b.controlTap(context.Background(), notification(MethodProgress, `{"progressToken":"`+tok+`","progress":1}`))
	b.controlTap(context.Background(), notification(MethodProgress, `{"progressToken":"other","progress":1}`))
	assert.Len(t, one.got(), 2, "progress by token only")
	assert.Empty(t, two.got(), "another call's log or progress")
	assert.Equal(t, []string{MethodLog, MethodProgress}, *missed)
	release()
	release2()
	b.controlTap(context.Background(), notification(MethodProgress, `{"progressToken":"`+tok+`","progress":2}`))
	assert.Len(t, one.got(), 2, "progress after the call ended")
}

// TestControlTapHTTPLogToWrongCall pins log attribution over streamable
// HTTP: by the call's context (the tapped response stream), never to the
// only call in flight when the log came on no call's stream.
func TestControlTapHTTPLogToWrongCall(t *testing.T) {
	b, missed := tapBackend(config.TransportStreamableHTTP)
	mine, other := &recSink{}, &recSink{}
	defer b.Attach(other, "")()
	b.controlTap(WithSink(context.Background(), mine), notification(MethodLog, `{"level":"info"}`))
	b.controlTap(context.Background(), notification(MethodLog, `{"level":"info"}`)) // e.g. the GET stream
	assert.Len(t, mine.got(), 1)
	assert.Empty(t, other.got())
	assert.Equal(t, []string{MethodLog}, *missed)
}
