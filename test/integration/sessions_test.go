package integration

import (
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// Two Legacy client sessions calling a stateful backend concurrently each
// get their own backend session: each sees only its own counter.
func TestConcurrentClientSessionsDoNotShareBackendSessionState(t *testing.T) {
	be := harness.StartBackend(t, "store", harness.Stateful, func(s *mcp.Server) { harness.AddCounter(s, "counter") })
	v := harness.StartVMCP(t, nil, be.Config())
	a := v.Connect(t, legacy, nil)
	b := v.Connect(t, legacy, nil)

	start := make(chan struct{})
	var wg sync.WaitGroup
	run := func(cs *mcp.ClientSession, n int, got *[]string, errs *[]error) {
		defer wg.Done()
		<-start
		for range n {
			res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "store_counter"})
			if err != nil {
				*errs = append(*errs, err)
				return
			}
			for _, c := range res.Content {
				if tc, ok := c.(*mcp.TextContent); ok {
					*got = append(*got, tc.Text)
				}
			}
		}
	}
	var gotA, gotB []string
	var errA, errB []error
	wg.Add(2)
	go run(a, 5, &gotA, &errA)
	go run(b, 3, &gotB, &errB)
	close(start)
	wg.Wait()
	require.Empty(t, errA)
	require.Empty(t, errB)
	require.Equal(t, seq(5), gotA, "session A")
	require.Equal(t, seq(3), gotB, "session B")
}

func seq(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = strconv.Itoa(i + 1)
	}
	return out
}

// A stdio backend gets one process per client session: whoami is stable
// within a session and differs across sessions; calls work.
func TestStdioBackendOneProcessPerClientSession(t *testing.T) {
	v := harness.StartVMCP(t, nil, harness.StdioBackend(t, "local"))
	a := v.Connect(t, legacy, nil)
	b := v.Connect(t, legacy, nil)

	require.ElementsMatch(t, []string{"local_echo", "local_whoami", "local_counter", "local_roots", "local_roots_changed", "local_report", "local_ask", "local_wait", "local_cancelled", "local_touch"}, harness.ToolNames(t, a))
	require.Equal(t, "hi", callText(t, a, "local_echo", "hi"))
	idA := callText(t, a, "local_whoami", "")
	require.NotEmpty(t, idA)
	require.Equal(t, idA, callText(t, a, "local_whoami", ""), "same session, same process")
	idB := callText(t, b, "local_whoami", "")
	require.NotEqual(t, idA, idB, "two client sessions share one stdio process")

	require.Equal(t, "1", callText(t, a, "local_counter", ""))
	require.Equal(t, "2", callText(t, a, "local_counter", ""))
	require.Equal(t, "1", callText(t, b, "local_counter", ""))
}

// Ending a client session (DELETE) closes its backend sessions and
// forgets the client session.
func TestClientSessionEndReleasesBackendSessions(t *testing.T) {
	be := backendWith(t, "alpha", "echo")
	v := harness.StartVMCP(t, nil, be.Config())
	backendSessions := func() int {
		n := 0
		for range be.Server.Sessions() {
			n++
		}
		return n
	}
	// vmcp's control connection is one backend session.
	require.Eventually(t, func() bool { return backendSessions() == 1 }, stateWait, 10*time.Millisecond)

	cs := v.Connect(t, legacy, nil)
	require.Equal(t, "alpha/echo:x", callText(t, cs, "alpha_echo", "x"))
	require.Equal(t, 2, backendSessions(), "the client session's own backend session")
	require.Equal(t, 1, v.Server.SessionCount())

	require.NoError(t, cs.Close())
	require.Eventually(t, func() bool { return backendSessions() == 1 }, stateWait, 10*time.Millisecond,
		"backend session not closed after the client session ended")
	require.Eventually(t, func() bool { return v.Server.SessionCount() == 0 }, stateWait, 10*time.Millisecond,
		"vmcp still holds the client session")
}
