package integration

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// TestRootsListedFromTheCallingClientOnly pins roots answered by the wrong
// client: sessions A and B with different roots call, concurrently and 20
// times each, a Stateful backend tool that calls req.Session.ListRoots and
// a Stateless backend tool that asks for roots in an MRTR round; each
// backend must see exactly the calling client's roots.
func TestRootsListedFromTheCallingClientOnly(t *testing.T) {
	sf := harness.StartBackend(t, "sf", harness.Stateful, func(s *mcp.Server) { addRootsTool(s, "roots") })
	sl := harness.StartBackend(t, "sl", harness.Stateless, func(s *mcp.Server) { addRootsInputTool(s, "roots") })
	v := harness.StartVMCP(t, nil, sf.Config(), sl.Config())
	awaitTools(t, v, "sf_roots", "sl_roots")
	withRoots := &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{ListChanged: true}}}
	clients := map[string]*flowClient{
		"roots:file:///a/one,file:///a/two": connectFlow(t, v, "A", withRoots, &mcp.Root{URI: "file:///a/one"}, &mcp.Root{URI: "file:///a/two"}),
		"roots:file:///b":                   connectFlow(t, v, "B", withRoots, &mcp.Root{URI: "file:///b"}),
	}
	var wg sync.WaitGroup
	for want, c := range clients {
		for _, tool := range []string{"sf_roots", "sl_roots"} {
			wg.Go(func() {
				for range 20 {
					res, err := c.call(flowCtx(t), tool, nil, nil)
					assert.Equal(t, want, flowText(res, err), "%s via %s", c.name, tool)
				}
			})
		}
	}
	wg.Wait()
	for _, c := range clients {
		assert.Zero(t, c.wireCount("elicitation/create")+c.wireCount("sampling/createMessage"), "%s: unexpected requests", c.name)
		assert.Equal(t, 40, c.wireCount("roots/list"), "%s: roots/list requests (one per call)", c.name)
		assert.Equal(t, 40, c.onPost("roots/list"), "%s: roots/list on the calls' own streams", c.name)
	}
}

// TestMRTRTwoRoundsFromLegacyClient pins multi round-trip input lost
// between rounds: a Stateless (Modern) backend tool asks in two rounds
// (inputRequests "a" with requestState "s1", then "b" with "s2"); called
// from a Legacy client, vmcp asks the client twice (two elicitation/create
// requests, in order), retries with each answer and the backend's
// requestState unchanged, and the call completes with both answers.
func TestMRTRTwoRoundsFromLegacyClient(t *testing.T) {
	type round struct {
		state string
		keys  []string
	}
	var mu sync.Mutex
	var rounds []round
	var answerA sync.Map // marker -> first answer
	sl := harness.StartBackend(t, "sl", harness.Stateless, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "wizard", InputSchema: flowSchema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			a := flowArgsOf(req)
			var keys []string
			for k := range req.Params.InputResponses {
				keys = append(keys, k)
			}
			mu.Lock()
			rounds = append(rounds, round{req.Params.RequestState, keys})
			mu.Unlock()
			answer := func(id string) any {
				er, _ := req.Params.InputResponses[id].(*mcp.ElicitResult)
				if er == nil || er.Action != "accept" {
					return nil
				}
				return er.Content["answer"]
			}
			switch req.Params.RequestState {
			case "":
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"a": &mcp.ElicitParams{Message: a.Marker + " first?", RequestedSchema: answerSchema}},
					RequestState:  "s1",
				}, nil
			case "s1":
				ans := answer("a")
				if ans == nil {
					return flowFailure("round 2 without an answer to a: %v", req.Params.InputResponses), nil
				}
				answerA.Store(a.Marker, ans)
				return &mcp.CallToolResult{
					InputRequests: mcp.InputRequestMap{"b": &mcp.ElicitParams{Message: a.Marker + " second?", RequestedSchema: answerSchema}},
					RequestState:  "s2",
				}, nil
			case "s2":
				first, _ := answerA.Load(a.Marker)
				return flowResult("a=%v b=%v", first, answer("b")), nil
			}
			return flowFailure("unknown requestState %q", req.Params.RequestState), nil
		})
	})
	v := harness.StartVMCP(t, nil, sl.Config())
	awaitTools(t, v, "sl_wizard")
	asked := &recorder[string]{}
	c := connectFlow(t, v, "A", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}, ElicitationHandler: answering(asked)})

	for i := range 5 {
		marker := fmt.Sprintf("w%d", i)
		res, err := c.call(flowCtx(t), "sl_wizard", map[string]any{"marker": marker}, nil)
		require.Equal(t, fmt.Sprintf("a=ans(%[1]s first?) b=ans(%[1]s second?)", marker), flowText(res, err))
		require.Equal(t, []string{marker + " first?", marker + " second?"}, asked.all()[2*i:], "the client's elicitation handler, call %d", i)
	}
	require.Len(t, asked.all(), 10, "elicitations: exactly 2 per call")
	require.Equal(t, 10, c.wireCount("elicitation/create"), "elicitation/create requests on the wire")
	require.Equal(t, 10, c.onPost("elicitation/create"), "elicitation/create on the call's own stream")
	mu.Lock()
	defer mu.Unlock()
	require.Len(t, rounds, 15, "backend rounds: 3 per call")
	for i := 0; i < len(rounds); i += 3 {
		require.Equal(t, []round{{"", nil}, {"s1", []string{"a"}}, {"s2", []string{"b"}}}, rounds[i:i+3], "the backend's view of each retry")
	}
}

// TestCapabilitiesUndeclaredAreNotOfferedToBackends pins capabilities
// invented by vmcp, and requests sent to a client for a capability it never
// declared: a backend session sees exactly the client's declared
// capabilities. A client without elicitation calling a tool that elicits
// gets an error result at once (the backend's Elicit fails on the missing
// capability) and never receives elicitation/create. The go-sdk's
// CreateMessage and ListRoots do not check capabilities, so for sampling
// and roots vmcp itself refuses the backend's request instead of passing
// it on. On a Modern backend, the MRTR input vmcp would have to ask fails
// the call instead of hanging.
func TestCapabilitiesUndeclaredAreNotOfferedToBackends(t *testing.T) {
	sf := harness.StartBackend(t, "sf", harness.Stateful, func(s *mcp.Server) {
		addElicitTool(s, "elicit")
		addSampleTool(s, "sample")
		addRootsTool(s, "roots")
		addCapsTool(s, "caps")
	})
	sl := harness.StartBackend(t, "sl", harness.Stateless, func(s *mcp.Server) {
		addAskTool(s, "ask")
		addRootsInputTool(s, "roots")
	})
	v := harness.StartVMCP(t, nil, sf.Config(), sl.Config())
	awaitTools(t, v, "sf_elicit", "sf_sample", "sf_roots", "sf_caps", "sl_ask", "sl_roots")

	t.Run("none", func(t *testing.T) {
		c := connectFlow(t, v, "none", nil)
		res, err := c.call(flowCtx(t), "sf_caps", nil, nil)
		require.Equal(t, "elicitation=false sampling=false roots=false", flowText(res, err), "the backend session's client capabilities")
		res, err = c.call(flowCtx(t), "sf_elicit", map[string]any{"marker": "m"}, nil)
		require.NoError(t, err)
		require.True(t, res.IsError, "elicit without the capability: %s", flowText(res, err))
		require.Contains(t, flowText(res, err), "client does not support elicitation")
		require.Contains(t, flowText(res, err), "backend saw elicitation=false")
		res, err = c.call(flowCtx(t), "sf_sample", map[string]any{"marker": "m"}, nil)
		require.NoError(t, err)
		require.True(t, res.IsError, "sampling without the capability: %s", flowText(res, err))
		require.Contains(t, flowText(res, err), "backend saw elicitation=false sampling=false")
		res, err = c.call(flowCtx(t), "sf_roots", nil, nil)
		require.NoError(t, err)
		require.True(t, res.IsError, "roots without the capability: %s", flowText(res, err))
		_, err = c.call(flowCtx(t), "sl_ask", map[string]any{"marker": "m"}, nil)
		require.Error(t, err, "an MRTR elicitation for a client without elicitation")
		require.Contains(t, err.Error(), "elicitation")
		_, err = c.call(flowCtx(t), "sl_roots", nil, nil)
		require.Error(t, err, "an MRTR roots request for a client without roots")
		require.Contains(t, err.Error(), "roots")
		require.Zero(t, c.wireCount("elicitation/create"), "elicitation/create sent to a client that did not declare elicitation")
		require.Zero(t, c.wireCount("sampling/createMessage"), "sampling/createMessage sent to a client that did not declare sampling")
		require.Zero(t, c.wireCount("roots/list"), "roots/list sent to a client that did not declare roots")
	})

	t.Run("elicitation only", func(t *testing.T) {
		asked := &recorder[string]{}
		c := connectFlow(t, v, "el", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}, ElicitationHandler: answering(asked)})
		res, err := c.call(flowCtx(t), "sf_caps", nil, nil)
		require.Equal(t, "elicitation=true sampling=false roots=false", flowText(res, err))
		res, err = c.call(flowCtx(t), "sf_elicit", map[string]any{"marker": "m"}, nil)
		require.Equal(t, "elicited:accept:ans(m)", flowText(res, err))
		res, err = c.call(flowCtx(t), "sf_sample", map[string]any{"marker": "m"}, nil)
		require.NoError(t, err)
		require.True(t, res.IsError, "sampling without the capability: %s", flowText(res, err))
		require.Equal(t, []string{"m"}, asked.all())
		require.Zero(t, c.wireCount("sampling/createMessage"))
	})

	t.Run("all", func(t *testing.T) {
		asked, sampled := &recorder[string]{}, &recorder[string]{}
		c := connectFlow(t, v, "all", &mcp.ClientOptions{
			Capabilities:                  &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}},
			ElicitationHandler:            answering(asked),
			CreateMessageWithToolsHandler: sampling(sampled),
		})
		res, err := c.call(flowCtx(t), "sf_caps", nil, nil)
		require.Equal(t, "elicitation=true sampling=true roots=true", flowText(res, err))
		res, err = c.call(flowCtx(t), "sf_sample", map[string]any{"marker": "m"}, nil)
		require.Equal(t, "sampled:sample(m)", flowText(res, err))
	})
}
