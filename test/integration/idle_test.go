package integration

import (
	"bytes"
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
// request (a request's goroutines start in net/http.(*conn).serve), and
// GET streams being served.
func vmcpBackground() (background, getStreams int) {
	for _, s := range goroutineStacks() {
		switch {
		case strings.Contains(s, "(*streamableServerConn).serveGET"):
			getStreams++
		case strings.Contains(s, "github.com/vmcp/vmcp/pkg/") && !strings.Contains(s, "net/http.(*conn).serve"):
			background++
		}
	}
	return background, getStreams
}

// Regression: every idle Legacy session kept two goroutines of its own
// (one waiting for the session's end, one keeping its GET stream), so
// 10,000 idle sessions cost 20,000 goroutines beside what the go-sdk needs.
func TestIdleLegacySessionsEachHeldTwoGoroutinesOfTheirOwn(t *testing.T) {
	be := harness.StartBackend(t, "echo", harness.Stateful, func(s *mcp.Server) { echoTool(s, "echo", "echo") })
	v := harness.StartVMCP(t, nil, be.Config())
	before, _ := vmcpBackground()
	const n = 20
	for range n {
		v.Connect(t, legacy, nil)
	}
	require.Eventually(t, func() bool { _, g := vmcpBackground(); return g >= n }, 10*time.Second, 10*time.Millisecond, "every session's GET stream is served")
	after, _ := vmcpBackground()
	assert.Less(t, after-before, n/2, "vmcp goroutines outside requests grow with idle sessions: %d → %d for %d sessions", before, after, n)
}
