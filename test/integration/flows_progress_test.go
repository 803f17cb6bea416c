package integration

import (
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// jsonOf is v's JSON encoding (a progress token's identity: 7 and "7" differ).
func jsonOf(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

// progressFor returns the recorded progress notifications carrying token.
func progressFor(ps []*mcp.ProgressNotificationParams, token any) []*mcp.ProgressNotificationParams {
	var out []*mcp.ProgressNotificationParams
	for _, p := range ps {
		if jsonOf(p.ProgressToken) == jsonOf(token) {
			out = append(out, p)
		}
	}
	return out
}

// checkProgressCall calls tool with progress token tok and checks that the
// n notifications were read off the call's own stream before its response
// (the wire tap counts them when CallTool returns), and that the client's
// handler gets exactly n, in order 1..n, each with tok unchanged (type
// included) and the call's marker. It reports through t.Errorf, so it may
// run in a goroutine, and returns how many the handler had seen at return.
func checkProgressCall(t *testing.T, c *flowClient, tool string, tok any, n int) int {
	marker := fmt.Sprintf("%s/%s/%s", c.name, tool, jsonOf(tok))
	res, err := c.call(flowCtx(t), tool, map[string]any{"marker": marker, "n": n}, tok)
	onWire, onPost := c.wireProgress(jsonOf(tok))
	atReturn := len(progressFor(c.progress.all(), tok))
	if !assert.Equal(t, "progressed:"+marker, flowText(res, err)) {
		return atReturn
	}
	if !assert.Equal(t, n, onWire, "%s token %s: progress notifications read before the response", c.name, jsonOf(tok)) {
		return atReturn
	}
	assert.Equal(t, n, onPost, "%s token %s: progress notifications on the request's own stream", c.name, jsonOf(tok))
	if !assert.True(t, c.progress.await(func(ps []*mcp.ProgressNotificationParams) bool { return len(progressFor(ps, tok)) >= n }),
		"%s token %s: handler never got %d notifications", c.name, jsonOf(tok), n) {
		return atReturn
	}
	got := progressFor(c.progress.all(), tok)
	assert.Len(t, got, n, "%s token %s: handler notifications", c.name, jsonOf(tok))
	want := tok
	if i, ok := tok.(int); ok {
		want = float64(i) // a JSON number, as the client decodes it
	}
	for i, p := range got {
		assert.Equal(t, float64(i+1), p.Progress, "%s token %s: order", c.name, jsonOf(tok))
		assert.Equal(t, marker, p.Message, "%s token %s: another call's notification", c.name, jsonOf(tok))
		assert.Equal(t, want, p.ProgressToken, "%s: token changed (value or JSON type)", c.name)
	}
	return atReturn
}

// TestProgressBeforeResponseInOrderWithClientToken pins the lost-last-
// progress race: the go-sdk client completes a call inline but queues
// notifications, so a backend that sends 5 progress notifications and
// returns at once had its last ones forwarded after the response (or
// dropped) unless vmcp taps the backend stream. Each notification must be
// on the client's request stream before the response, in order, with the
// token exactly as the client sent it (string or number).
func TestProgressBeforeResponseInOrderWithClientToken(t *testing.T) {
	const n = 5
	tokens := []any{"tok-string", 7}
	for i := range 10 {
		tokens = append(tokens, fmt.Sprintf("s%d", i), 100+i)
	}
	run := func(t *testing.T, backend config.Backend) {
		v := harness.StartVMCP(t, nil, backend)
		tool := backend.Name + "_progress"
		awaitTools(t, v, tool)
		c := connectFlow(t, v, "A", nil)
		early := 0
		for _, tok := range tokens {
			if t.Failed() {
				break
			}
			if checkProgressCall(t, c, tool, tok, n) == n {
				early++
			}
		}
		t.Logf("the client's handler had all %d notifications at CallTool's return in %d of %d calls (the SDK client's own queue race)", n, early, len(tokens))
	}
	t.Run("stateful", func(t *testing.T) {
		run(t, harness.StartBackend(t, "sf", harness.Stateful, func(s *mcp.Server) { addProgressTool(s, "progress") }).Config())
	})
	t.Run("stateless", func(t *testing.T) {
		run(t, harness.StartBackend(t, "sl", harness.Stateless, func(s *mcp.Server) { addProgressTool(s, "progress") }).Config())
	})
	t.Run("stdio", func(t *testing.T) { run(t, flowStdioBackend("io")) })
}

// TestProgressTokenTypeKeepsConcurrentCallsApart pins token confusion by
// value: two concurrent calls of one session with tokens "7" and 7 are two
// different requests, and each gets only its own notifications, with its
// own token type.
func TestProgressTokenTypeKeepsConcurrentCallsApart(t *testing.T) {
	b := harness.StartBackend(t, "sf", harness.Stateful, func(s *mcp.Server) { addProgressTool(s, "progress") })
	v := harness.StartVMCP(t, nil, b.Config())
	awaitTools(t, v, "sf_progress")
	c := connectFlow(t, v, "A", nil)
	for round := range 10 {
		if t.Failed() {
			break
		}
		var wg sync.WaitGroup
		for _, tok := range []any{fmt.Sprint(round), round} {
			wg.Go(func() { checkProgressCall(t, c, "sf_progress", tok, 5) })
		}
		wg.Wait()
	}
}
