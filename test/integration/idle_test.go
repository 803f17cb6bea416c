package integration

import (
	"bytes"
	"context"
	"runtime/pprof"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// goroutineStacks returns the stacks of every goroutine (one per entry).
func goroutineStacks() []string {
	var b bytes.Buffer
	_ = pprof.Lookup("goroutine").WriteTo(&b, 2)
	return strings.Split(b.String(), "\n\n")
}

// vmcpBackground counts goroutines running vmcp code outside any HTTP
// request (a request's goroutines start in net/http.(*conn).serve).
func vmcpBackground() (background int) {
	for _, s := range goroutineStacks() {
		if strings.Contains(s, "github.com/vmcp/vmcp/pkg/") && !strings.Contains(s, "net/http.(*conn).serve") {
			background++
		}
	}
	return background
}

// Regression: every idle Legacy session kept two goroutines of its own
// (one waiting for the session's end, one keeping its GET stream), so
// 10,000 idle sessions cost 20,000 goroutines beside what the go-sdk needs.
func TestIdleLegacySessionsEachHeldTwoGoroutinesOfTheirOwn(t *testing.T) {
	be := harness.StartBackend(t, "echo", harness.Stateful, func(s *mcp.Server) { echoTool(s, "echo", "echo") })
	v := harness.StartVMCP(t, nil, be.Config())
	before := vmcpBackground()
	const n = 20
	for range n {
		v.Connect(t, legacy, nil)
	}
	require.Eventually(t, func() bool { return v.Server.Cluster().Status().Streams >= n }, stateWait, 10*time.Millisecond, "every session's GET stream is served")
	after := vmcpBackground()
	assert.Less(t, after-before, n/2, "vmcp goroutines outside requests grow with idle sessions: %d → %d for %d sessions", before, after, n)
}

// Regression: the go-sdk handler kept every standalone GET in its handler
// until the session ended, so each idle Legacy session held net/http's
// connection goroutine, its background read and their buffers besides the
// SDK session's reader. vmcp now serves the stream itself on the hijacked
// connection: no goroutine hangs in serveGET, and a list_changed still
// reaches every session, through vmcp's own writes.
func TestIdleLegacyGETStreamsEachHeldAServerGoroutine(t *testing.T) {
	be := harness.StartBackend(t, "echo", harness.Stateful, func(s *mcp.Server) { echoTool(s, "echo", "echo") })
	v := harness.StartVMCP(t, nil, be.Config())
	const n = 20
	changed := make(chan struct{}, n)
	for range n {
		v.Connect(t, legacy, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
			ToolListChangedHandler: func(context.Context, *mcp.ToolListChangedRequest) { changed <- struct{}{} }})
	}
	require.Eventually(t, func() bool { return v.Server.Cluster().Status().OwnStreams == n }, stateWait, 10*time.Millisecond,
		"every session's GET stream is served by vmcp: %+v", v.Server.Cluster().Status())
	hanging := func() (k int) {
		for _, s := range goroutineStacks() {
			if strings.Contains(s, "(*streamableServerConn).serveGET") && strings.Contains(s, "vmcp/pkg/cluster.") { // not the backend's
				k++
			}
		}
		return k
	}
	require.Eventually(t, func() bool { return hanging() == 0 }, stateWait, 10*time.Millisecond, "GET handlers hanging in the go-sdk")
	be.AwaitGETStreams(t, stateWait) // else the go-sdk drops the list_changed below
	harness.AddEcho(be.Server, "added")
	for i := range n {
		select {
		case <-changed:
		case <-time.After(10 * time.Second):
			t.Fatalf("%d of %d sessions got tools/list_changed", i, n)
		}
	}
}
