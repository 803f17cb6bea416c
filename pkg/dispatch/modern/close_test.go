package modern_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/dispatch/modern"
	"github.com/vmcp/vmcp/pkg/mrtr"
)

// When vmcp closes, a call parked on a Legacy backend while the backend
// waits in Elicit is ended before Close returns: the backend is told (its
// handler returns) and the call's backend session is closed. Close used to
// leave that session to a timer firing after it returned, so a backend
// going away right after vmcp never heard of the cancellation and its
// handler stayed in Elicit, blocking the backend's own session Close.
func TestModernCloseLeftParkedElicitationBlocked(t *testing.T) {
	asked, ended := make(chan struct{}), make(chan error, 1)
	srv := mcp.NewServer(&mcp.Implementation{Name: "lb", Version: "test"}, nil)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			close(asked)
			_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?",
				RequestedSchema: map[string]any{"type": "object"}})
			ended <- err
			return nil, err
		})
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil))
	t.Cleanup(hs.Close)
	url, v := startVMCP(t, nil, config.Backend{Name: "lb", URL: hs.URL, Transport: config.TransportStreamableHTTP})

	before := map[*mcp.ServerSession]bool{} // vmcp's control connection
	for ss := range srv.Sessions() {
		before[ss] = true
	}
	meta := stdMeta()
	meta[mcp.MetaKeyClientCapabilities] = map[string]any{"elicitation": map[string]any{}}
	st, r := rpc(t, url, `1`, "tools/call", map[string]any{"name": "lb_ask", "_meta": meta})
	res := result(t, st, r)
	require.Equal(t, "input_required", res["resultType"])
	<-asked
	require.Equal(t, 1, v.ParkedCalls())

	require.NoError(t, v.Close())
	select {
	case err := <-ended:
		require.Error(t, err, "the backend's Elicit failed")
	default:
		t.Fatal("vmcp's Close returned while the backend's handler still waited in Elicit")
	}
	for ss := range srv.Sessions() {
		require.True(t, before[ss], "vmcp's Close returned with the parked call's backend session still open")
	}
}

// rangeSignal is a Directory that closes ranged when Close ranges over it.
type rangeSignal struct {
	*mrtr.Memory
	once   sync.Once
	ranged chan struct{}
}

func (r *rangeSignal) Range(f func(*mrtr.Call) bool) {
	r.Memory.Range(f)
	r.once.Do(func() { close(r.ranged) })
}

// A call that reaches the parked directory only after Close cancelled the
// calls it found (its backend session was still opening) is refused, not
// left parked with its backend waiting in Elicit: Close used to wait its
// full bound for it and return with the call still parked.
func TestModernCloseMissedCallParkedDuringClose(t *testing.T) {
	srv := mcp.NewServer(&mcp.Implementation{Name: "lb", Version: "test"}, nil)
	srv.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}},
		func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			_, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: map[string]any{"type": "object"}})
			return nil, err
		})
	var armed atomic.Bool
	opening, release := make(chan struct{}), make(chan struct{})
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && armed.CompareAndSwap(true, false) {
			close(opening) // the parked call's backend session is being opened
			<-release
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(hs.Close)
	agg := aggregator.New(aggregator.Policy{}, nil)
	mgr := backends.NewManager([]config.Backend{{Name: "lb", URL: hs.URL, Transport: config.TransportStreamableHTTP}},
		agg, slog.New(slog.DiscardHandler), "test")
	mgr.Start(10 * time.Second)
	t.Cleanup(mgr.Close)
	dir := &rangeSignal{Memory: mrtr.NewMemory(), ranged: make(chan struct{})}
	opts := completeOptions(t, agg, mgr)
	opts.Parked = dir
	d := modern.New(agg, mgr, opts)
	vs := httptest.NewServer(d)
	t.Cleanup(vs.Close)

	armed.Store(true)
	meta := stdMeta()
	meta[mcp.MetaKeyClientCapabilities] = map[string]any{"elicitation": map[string]any{}}
	type answer struct {
		status int
		r      reply
	}
	got := make(chan answer, 1)
	go func() {
		resp, b := post(t, vs.URL, modernHeaders("tools/call", "lb_ask"), body(`1`, "tools/call", map[string]any{"name": "lb_ask", "_meta": meta}))
		got <- answer{resp.StatusCode, decodeReply(t, b)}
	}()
	select {
	case <-opening:
	case a := <-got:
		t.Fatalf("answered without opening a backend session: %+v %s", a.r.Error, a.r.Result)
	}
	closed := make(chan struct{})
	go func() { d.Close(); close(closed) }()
	<-dir.ranged // Close has cancelled every call it found
	close(release)
	a := <-got
	<-closed
	require.NotNil(t, a.r.Error, "the call was parked after Close: %s", a.r.Result)
	require.Contains(t, a.r.Error.Message, "shutting down")
	require.Zero(t, d.Parked().Len(), "Close returned with a call still parked")
}
