package integration

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// subscribable are the server options of a backend whose resources can be
// subscribed to.
func subscribable() *mcp.ServerOptions {
	ok := func(context.Context, *mcp.SubscribeRequest) error { return nil }
	nok := func(context.Context, *mcp.UnsubscribeRequest) error { return nil }
	return &mcp.ServerOptions{SubscribeHandler: ok, UnsubscribeHandler: nok}
}

// addResources registers a text resource per URI.
func addResources(s *mcp.Server, uris ...string) {
	for _, u := range uris {
		s.AddResource(&mcp.Resource{URI: u, Name: u[strings.LastIndex(u, "/")+1:]},
			func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
				return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "x"}}}, nil
			})
	}
}

// isoSession is one client session of the isolation test.
type isoSession struct {
	*flowClient
	elicited, sampled *recorder[string]
	own, fence        string // resource URIs only this session subscribes to
}

const (
	uriShared = "res://flows/shared"
	isoIters  = 20 // calls per kind per session
	isoLogN   = 3  // info logs per logging call
	isoDebug  = 2  // debug logs before each info log
	isoUpd    = 20 // resources/updated per URI
)

func (s *isoSession) count(uri string) int {
	return count(s.updated.all(), func(u string) bool { return u == uri })
}

// TestIsolationConcurrentSessionsGetOnlyTheirOwnMessages pins cross-talk
// between Legacy client sessions: two sessions A and B use the same
// Stateful and Stateless backends at once, each running, 20 times,
// progress (the same tokens in both sessions), logging (info K=3, debug
// dropped), elicitation and sampling (Stateful: req.Session.Elicit and
// CreateMessage; Stateless: an MRTR round), while each holds resource
// subscriptions (its own URI plus one both subscribe to) that the backend
// updates 20 times each. Every message must reach only the session whose
// call or subscription caused it, exactly once.
func TestIsolationConcurrentSessionsGetOnlyTheirOwnMessages(t *testing.T) {
	sf := flowBackend(t, "sf", harness.Stateful, subscribable(), nil, func(s *mcp.Server) {
		addProgressTool(s, "progress")
		addLogTool(s, "logs")
		addElicitTool(s, "elicit")
		addSampleTool(s, "sample")
		addResources(s, "res://flows/A", "res://flows/B", uriShared, "res://flows/fence-A", "res://flows/fence-B")
	})
	sl := harness.StartBackend(t, "sl", harness.Stateless, func(s *mcp.Server) {
		addProgressTool(s, "progress")
		addLogTool(s, "logs")
		addAskTool(s, "ask")
	})
	v := harness.StartVMCP(t, nil, sf.Config(), sl.Config())
	awaitTools(t, v, "sf_progress", "sf_logs", "sf_elicit", "sf_sample", "sl_progress", "sl_logs", "sl_ask")

	connect := func(name string) *isoSession {
		s := &isoSession{elicited: &recorder[string]{}, sampled: &recorder[string]{},
			own: "res://flows/" + name, fence: "res://flows/fence-" + name}
		s.flowClient = connectFlow(t, v, name, &mcp.ClientOptions{
			Capabilities:                  &mcp.ClientCapabilities{},
			ElicitationHandler:            answering(s.elicited),
			CreateMessageWithToolsHandler: sampling(s.sampled),
		})
		require.NoError(t, s.cs.SetLoggingLevel(flowCtx(t), &mcp.SetLoggingLevelParams{Level: "info"}))
		for _, u := range []string{s.own, uriShared, s.fence} {
			require.NoError(t, s.cs.Subscribe(flowCtx(t), &mcp.SubscribeParams{URI: u}), "%s subscribing %s", name, u)
		}
		return s
	}
	sessions := []*isoSession{connect("A"), connect("B")}
	sf.AwaitGETStreams(t, flowWait) // else the go-sdk drops updates sent before vmcp's GET streams are connected

	var wg sync.WaitGroup
	for _, s := range sessions {
		wg.Go(func() { // progress: tokens "p<i>" (Stateful) and <i> (Stateless), the same in both sessions
			for i := range isoIters {
				if t.Failed() {
					return
				}
				checkProgressCall(t, s.flowClient, "sf_progress", fmt.Sprintf("p%d", i), 5)
				checkProgressCall(t, s.flowClient, "sl_progress", i, 5)
			}
		})
		wg.Go(func() { // logging
			for i := range isoIters {
				for _, b := range []string{"sf", "sl"} {
					marker := fmt.Sprintf("%s-log-%s-%d", s.name, b, i)
					res, err := s.call(flowCtx(t), b+"_logs", map[string]any{"marker": marker, "n": isoLogN, "debug": isoDebug}, nil)
					assert.Equal(t, "logged:"+marker, flowText(res, err))
				}
			}
		})
		wg.Go(func() { // elicitation: Stateful Elicit, Stateless MRTR round
			for i := range isoIters {
				marker := fmt.Sprintf("%s-el-sf-%d", s.name, i)
				res, err := s.call(flowCtx(t), "sf_elicit", map[string]any{"marker": marker}, nil)
				assert.Equal(t, "elicited:accept:ans("+marker+")", flowText(res, err))
				marker = fmt.Sprintf("%s-el-sl-%d", s.name, i)
				res, err = s.call(flowCtx(t), "sl_ask", map[string]any{"marker": marker}, nil)
				assert.Equal(t, "asked:accept:ans("+marker+")", flowText(res, err))
			}
		})
		wg.Go(func() { // sampling
			for i := range isoIters {
				marker := fmt.Sprintf("%s-sa-%d", s.name, i)
				res, err := s.call(flowCtx(t), "sf_sample", map[string]any{"marker": marker}, nil)
				assert.Equal(t, "sampled:sample("+marker+")", flowText(res, err))
			}
		})
	}
	wg.Go(func() { // resource updates, interleaved
		for range isoUpd {
			for _, u := range []string{"res://flows/A", "res://flows/B", uriShared} {
				assert.NoError(t, sf.Server.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: u}))
			}
		}
	})
	wg.Wait()
	if t.Failed() {
		t.FailNow()
	}

	// Wait for the asynchronous deliveries (logs, updates), then fence:
	// every session's path has carried a later message, so a duplicate or
	// stray one would have arrived.
	for _, s := range sessions {
		for i := range isoIters {
			for _, b := range []string{"sf", "sl"} {
				awaitLog(t, s.flowClient, fmt.Sprintf("%s-log-%s-%d", s.name, b, i), isoLogN)
			}
		}
		require.True(t, s.updated.await(func(us []string) bool {
			return count(us, func(u string) bool { return u == s.own }) >= isoUpd && count(us, func(u string) bool { return u == uriShared }) >= isoUpd
		}), "%s: updates never arrived: %d own, %d shared", s.name, s.count(s.own), s.count(uriShared))
	}
	for round := 1; round <= 2; round++ {
		for _, s := range sessions {
			require.NoError(t, sf.Server.ResourceUpdated(context.Background(), &mcp.ResourceUpdatedNotificationParams{URI: s.fence}))
			for _, b := range []string{"sf", "sl"} {
				marker := fmt.Sprintf("%s-logfence-%s-%d", s.name, b, round)
				res, err := s.call(flowCtx(t), b+"_logs", map[string]any{"marker": marker, "n": 1}, nil)
				require.Equal(t, "logged:"+marker, flowText(res, err))
				awaitLog(t, s.flowClient, marker, 1)
			}
		}
		for _, s := range sessions {
			require.True(t, s.updated.await(func(us []string) bool { return count(us, func(u string) bool { return u == s.fence }) >= round }),
				"%s: fence %d never arrived", s.name, round)
		}
	}

	for _, s := range sessions {
		other := "B"
		if s.name == "B" {
			other = "A"
		}
		// Progress: only this session's, 5 per call (counted per call above).
		for _, p := range s.progress.all() {
			assert.True(t, strings.HasPrefix(p.Message, s.name+"/"), "%s got progress %q", s.name, p.Message)
		}
		assert.Len(t, s.progress.all(), 2*isoIters*5, "%s: progress notifications", s.name)
		// Logging: exactly K info per call, in order, no debug, none of the other's.
		perMarker := map[string][]int{}
		for _, p := range s.logs.all() {
			marker, i := logMarker(p)
			assert.Equal(t, mcp.LoggingLevel("info"), p.Level, "%s: log %v", s.name, p.Data)
			assert.True(t, strings.HasPrefix(marker, s.name+"-"), "%s got log %v", s.name, p.Data)
			perMarker[marker] = append(perMarker[marker], i)
		}
		for i := range isoIters {
			for _, b := range []string{"sf", "sl"} {
				assert.Equal(t, []int{1, 2, 3}, perMarker[fmt.Sprintf("%s-log-%s-%d", s.name, b, i)], "%s: info logs of call %s %d", s.name, b, i)
			}
		}
		assert.Len(t, perMarker, 2*isoIters+4, "%s: logging calls seen", s.name)
		// Elicitation and sampling: each request once, on the calling
		// session only, on the originating call's own (POST) stream.
		assertOncePerMarker(t, s.name+" elicitation", s.elicited.all(), s.name, 2*isoIters)
		assertOncePerMarker(t, s.name+" sampling", s.sampled.all(), s.name, isoIters)
		assert.Equal(t, 2*isoIters, s.onPost("elicitation/create"), "%s: elicitation/create on request streams", s.name)
		assert.Equal(t, isoIters, s.onPost("sampling/createMessage"), "%s: sampling/createMessage on request streams", s.name)
		assert.Equal(t, 2*isoIters, s.wireCount("elicitation/create"), "%s: elicitation/create in all", s.name)
		assert.Equal(t, isoIters, s.wireCount("sampling/createMessage"), "%s: sampling/createMessage in all", s.name)
		// Resource updates: exact counts, never the other's URI.
		assert.Equal(t, isoUpd, s.count(s.own), "%s: updates of its own URI", s.name)
		assert.Equal(t, isoUpd, s.count(uriShared), "%s: updates of the shared URI (once per update, not once per backend session)", s.name)
		assert.Equal(t, 2, s.count(s.fence), "%s: fence updates", s.name)
		assert.Zero(t, s.count("res://flows/"+other), "%s: got %s's updates", s.name, other)
		assert.Zero(t, s.count("res://flows/fence-"+other), "%s: got %s's fence", s.name, other)
		assert.Len(t, s.updated.all(), 2*isoUpd+2, "%s: updates in all", s.name)
	}
}

// awaitLog waits until c has the info log number n of marker.
func awaitLog(t *testing.T, c *flowClient, marker string, n int) {
	t.Helper()
	require.True(t, c.logs.await(func(ps []*mcp.LoggingMessageParams) bool {
		for _, p := range ps {
			if m, i := logMarker(p); m == marker && i == n {
				return true
			}
		}
		return false
	}), "%s: log %d of %s never arrived", c.name, n, marker)
}

// assertOncePerMarker checks that a handler saw want distinct requests,
// each once, all from session name.
func assertOncePerMarker(t *testing.T, what string, seen []string, name string, want int) {
	t.Helper()
	times := map[string]int{}
	for _, m := range seen {
		times[m]++
		assert.True(t, strings.HasPrefix(m, name+"-"), "%s: request %q of another session", what, m)
	}
	assert.Len(t, times, want, "%s: distinct requests", what)
	for m, n := range times {
		assert.Equal(t, 1, n, "%s: %q handled %d times", what, m, n)
	}
}
