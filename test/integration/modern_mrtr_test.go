package integration

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// Multi round-trip requests (2026-07-28 input_required) through vmcp, for
// Modern and Legacy backends and clients; requestState integrity; parked
// Legacy calls; client capabilities; caching fields; and the go-sdk
// conformance everything-server's input-requiring tools.

var nameSchema = map[string]any{"type": "object", "properties": map[string]any{"v": map[string]any{"type": "string"}}}

// addWizard (Modern backends) asks two rounds with evolving requestState
// ("round=1", then "round=2;name=<name>") and answers "<name> likes <color>".
func addWizard(s *mcp.Server) {
	s.AddTool(&mcp.Tool{Name: "wizard", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		answer := func(id string) string {
			er, _ := req.Params.InputResponses[id].(*mcp.ElicitResult)
			if er == nil {
				return "?"
			}
			v, _ := er.Content["v"].(string)
			return v
		}
		switch st := req.Params.RequestState; {
		case st == "":
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{Message: "name?", RequestedSchema: nameSchema}},
				RequestState: "round=1"}, nil
		case st == "round=1":
			return &mcp.CallToolResult{InputRequests: mcp.InputRequestMap{"color": &mcp.ElicitParams{Message: "color?", RequestedSchema: nameSchema}},
				RequestState: "round=2;name=" + answer("name")}, nil
		case strings.HasPrefix(st, "round=2;name="):
			return textResultOf(strings.TrimPrefix(st, "round=2;name=") + " likes " + answer("color")), nil
		}
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "bad requestState " + req.Params.RequestState}
	})
}

// addQuiz (Legacy backends) elicits twice, samples and lists roots during
// one call, then reports all answers.
func addQuiz(s *mcp.Server, started chan<- context.Context) {
	s.AddTool(&mcp.Tool{Name: "quiz", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if started != nil {
			started <- ctx
		}
		var got []string
		for _, q := range []string{"name?", "color?"} {
			er, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: q, RequestedSchema: nameSchema})
			if err != nil {
				return nil, err
			}
			v, _ := er.Content["v"].(string)
			got = append(got, v)
		}
		cm, err := req.Session.CreateMessage(ctx, &mcp.CreateMessageParams{MaxTokens: 5,
			Messages: []*mcp.SamplingMessage{{Role: "user", Content: &mcp.TextContent{Text: "capital?"}}}})
		if err != nil {
			return nil, err
		}
		tc, _ := cm.Content.(*mcp.TextContent)
		roots, err := req.Session.ListRoots(ctx, nil)
		if err != nil {
			return nil, err
		}
		return textResultOf(fmt.Sprintf("%s likes %s; %s; %d root(s)", got[0], got[1], tc.Text, len(roots.Roots))), nil
	})
}

func textResultOf(s string) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: s}}}
}

// connectAnswering connects a client (version "" is Modern) that answers
// elicitations by their message, samples "Paris" and exposes one root.
func connectAnswering(t *testing.T, v *harness.VMCP, version string) *mcp.ClientSession {
	t.Helper()
	return connectAnsweringTo(t, v.URL, version)
}

// connectAnsweringTo is connectAnswering for any MCP endpoint.
func connectAnsweringTo(t *testing.T, endpoint, version string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "answering", Version: "test"}, &mcp.ClientOptions{
		Capabilities: &mcp.ClientCapabilities{RootsV2: &mcp.RootCapabilities{}},
		ElicitationHandler: func(_ context.Context, r *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			answers := map[string]string{"name?": "ada", "color?": "blue"}
			return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"v": answers[r.Params.Message],
				"name": "ada", "color": "blue", "ok": true}}, nil
		},
		CreateMessageHandler: func(context.Context, *mcp.CreateMessageRequest) (*mcp.CreateMessageResult, error) {
			return &mcp.CreateMessageResult{Role: "assistant", Model: "m", Content: &mcp.TextContent{Text: "Paris"}}, nil
		},
	})
	client.AddRoots(&mcp.Root{URI: "file:///work"})
	cs, err := client.Connect(ctx(t), &mcp.StreamableClientTransport{Endpoint: endpoint}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	require.NoError(t, err)
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// A multi-round MRTR tool completes through vmcp from a Modern and a
// Legacy client, whether the backend is Modern (input_required passes
// through, its requestState sealed in vmcp's) or Legacy (vmcp parks the
// call between elicitation, sampling and roots requests; prompts/get too).
func TestModernMRTRMultiRoundAllEras(t *testing.T) {
	modernBE := harness.StartBackend(t, "mb", harness.Stateless, addWizard)
	legacyBE := harness.StartBackend(t, "lb", harness.Stateful, func(s *mcp.Server) {
		addQuiz(s, nil)
		s.AddPrompt(&mcp.Prompt{Name: "greet"}, func(ctx context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			er, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: nameSchema})
			if err != nil {
				return nil, err
			}
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: fmt.Sprint("hello ", er.Content["v"])}}}}, nil
		})
	})
	v := harness.StartVMCP(t, nil, modernBE.Config(), legacyBE.Config())
	for _, version := range []string{"", legacy} {
		t.Run("client "+map[string]string{"": "modern", legacy: "legacy"}[version], func(t *testing.T) {
			cs := connectAnswering(t, v, version)
			res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "mb_wizard"})
			require.NoError(t, err)
			require.Equal(t, "ada likes blue", harness.Text(t, res))
			res, err = cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "lb_quiz"})
			require.NoError(t, err)
			require.Equal(t, "ada likes blue; Paris; 1 root(s)", harness.Text(t, res))
			pr, err := cs.GetPrompt(ctx(t), &mcp.GetPromptParams{Name: "lb_greet"})
			require.NoError(t, err)
			require.Equal(t, "hello ada", pr.Messages[0].Content.(*mcp.TextContent).Text)
		})
	}
}

// A Modern backend's requestState never reaches the client as is; a
// tampered, foreign or misdirected requestState is -32602 (HTTP 400), for
// forwarded and for parked calls alike.
func TestModernMRTRRequestStateIntegrity(t *testing.T) {
	modernBE := harness.StartBackend(t, "mb", harness.Stateless, addWizard)
	legacyBE := harness.StartBackend(t, "lb", harness.Stateful, func(s *mcp.Server) { addQuiz(s, nil); harness.AddEcho(s, "echo") })
	v := harness.StartVMCP(t, nil, modernBE.Config(), legacyBE.Config())
	elicitCaps := map[string]any{mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}}}

	st, msg := modernRPC(t, v, `1`, "tools/call", "mb_wizard", map[string]any{"name": "mb_wizard"})
	require.Equal(t, http.StatusOK, st, "%v", msg)
	res := msg["result"].(map[string]any)
	require.Equal(t, "input_required", res["resultType"])
	forwarded := res["requestState"].(string)
	require.NotContains(t, forwarded, "round=1", "the backend's state is sealed")

	st, msg = modernRPC(t, v, `2`, "tools/call", "lb_quiz", map[string]any{"name": "lb_quiz", "_meta": elicitCaps})
	require.Equal(t, http.StatusOK, st, "%v", msg)
	res = msg["result"].(map[string]any)
	require.Equal(t, "input_required", res["resultType"])
	require.Len(t, res["inputRequests"], 1)
	parked := res["requestState"].(string)

	answer := map[string]any{"action": "accept", "content": map[string]any{"v": "x"}}
	for name, c := range map[string]struct{ tool, state string }{
		"tampered forwarded": {"mb_wizard", forwarded[:len(forwarded)-3] + "AAA"},
		"tampered parked":    {"lb_quiz", parked + "-TAMPERED"},
		"made up":            {"mb_wizard", "round=1"},
		"for another tool":   {"lb_echo", parked},
	} {
		t.Run(name, func(t *testing.T) {
			st, msg := modernRPC(t, v, `3`, "tools/call", c.tool, map[string]any{"name": c.tool, "requestState": c.state,
				"inputResponses": map[string]any{"name": answer}})
			require.Equal(t, http.StatusBadRequest, st, "%v", msg)
			require.Equal(t, float64(jsonrpc.CodeInvalidParams), msg["error"].(map[string]any)["code"], "%v", msg)
		})
	}
}

// With two cluster nodes behind a round-robin balancer, a parked call's
// rounds reach both nodes: the node that does not own the call forwards
// the retry to the owner sealed in its requestState, and the call
// completes.
func TestModernMRTRParkedCallResumesAcrossNodes(t *testing.T) {
	redisURL := clustertest.Standalone(t)
	prefix := redisURL.Prefix(t)
	be := harness.StartBackend(t, "lb", harness.Stateful, func(s *mcp.Server) { addQuiz(s, nil) })
	n1 := clStartNode(t, "n1", redisURL, prefix, false, be.Config())
	n2 := clStartNode(t, "n2", redisURL, prefix, false, be.Config())
	lb := clStartBalancer(t, n1, n2)
	cs := connectAnsweringTo(t, lb.URL, "")
	res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "lb_quiz"})
	require.NoError(t, err)
	require.Equal(t, "ada likes blue; Paris; 1 root(s)", harness.Text(t, res))
	require.Positive(t, n1.forwarded.Load()+n2.forwarded.Load(), "some round reached the other node")
}

// A parked Legacy call that is never resumed is cancelled upstream after
// mrtr.park_timeout, and its requestState is then refused.
func TestModernMRTRParkTimeoutCancelsUpstream(t *testing.T) {
	started := make(chan context.Context, 1)
	legacyBE := harness.StartBackend(t, "lb", harness.Stateful, func(s *mcp.Server) { addQuiz(s, started) })
	v := harness.StartVMCP(t, func(c *config.Config) { c.MRTR.ParkTimeout = config.Duration(300 * time.Millisecond) }, legacyBE.Config())
	st, msg := modernRPC(t, v, `1`, "tools/call", "lb_quiz", map[string]any{"name": "lb_quiz",
		"_meta": map[string]any{mcp.MetaKeyClientCapabilities: map[string]any{"elicitation": map[string]any{}}}})
	require.Equal(t, http.StatusOK, st, "%v", msg)
	res := msg["result"].(map[string]any)
	var backendCtx context.Context
	select {
	case backendCtx = <-started:
	case <-time.After(stateWait):
		t.Fatal("the backend tool did not start")
	}
	select {
	case <-backendCtx.Done():
	case <-time.After(stateWait):
		t.Fatal("the parked call was not cancelled upstream")
	}
	require.Eventually(t, func() bool { return v.Server.ParkedCalls() == 0 }, stateWait, 5*time.Millisecond, "the parked call is gone")
	for id := range res["inputRequests"].(map[string]any) {
		st, msg = modernRPC(t, v, `2`, "tools/call", "lb_quiz", map[string]any{"name": "lb_quiz", "requestState": res["requestState"],
			"inputResponses": map[string]any{id: map[string]any{"action": "accept", "content": map[string]any{"v": "late"}}}})
		require.Equal(t, http.StatusBadRequest, st, "%v", msg)
		require.Contains(t, msg["error"].(map[string]any)["message"], "no longer parked")
	}
}

// A backend sees exactly the capabilities the Modern client declared: a
// Modern backend in each request's _meta, a Legacy HTTP backend on the
// pooled session of its parked call (one opened with the client's own
// capabilities, none included). Only a stdio Legacy backend's calls from a
// client that cannot be asked use its control connection, which declares
// what vmcp bridges and refuses the backend's requests
// (TestNpmEverythingClientWithoutCapabilityGetsBackendsAnswer).
func TestModernClientCapabilitiesReachBackends(t *testing.T) {
	report := func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "caps", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			c := req.ClientCapabilities() // _meta on Modern, the session's on Legacy
			if c == nil {
				c = &mcp.ClientCapabilities{}
			}
			return textResultOf(fmt.Sprintf("elicitation=%t sampling=%t roots=%t", c.Elicitation != nil, c.Sampling != nil, c.RootsV2 != nil)), nil
		})
	}
	modernBE := harness.StartBackend(t, "mb", harness.Stateless, report)
	legacyBE := harness.StartBackend(t, "lb", harness.Stateful, report)
	v := harness.StartVMCP(t, nil, modernBE.Config(), legacyBE.Config())
	for _, c := range []struct {
		name           string
		opts           *mcp.ClientOptions
		modern, legacy string
	}{
		{"none", nil, "elicitation=false sampling=false roots=false", "elicitation=false sampling=false roots=false"},
		{"elicitation", &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
			ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) { return nil, nil }},
			"elicitation=true sampling=false roots=false", "elicitation=true sampling=false roots=false"},
	} {
		t.Run(c.name, func(t *testing.T) {
			cs := v.Connect(t, "", c.opts)
			for tool, want := range map[string]string{"mb_caps": c.modern, "lb_caps": c.legacy} {
				res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: tool})
				require.NoError(t, err)
				require.Equal(t, want, harness.Text(t, res), tool)
			}
		})
	}
}

// List results carry the backends' aggregated cache hint (smallest
// non-zero ttlMs, private if any said so); a private resources/read with a
// TTL read over the shared connection is never served to another client;
// MRTR retries are never cacheable.
func TestModernCachingFields(t *testing.T) {
	cacheable := func(ttl int, scope string) *mcp.ServerOptions {
		return &mcp.ServerOptions{SetCacheable: func(_ context.Context, _ mcp.Request, c *mcp.Cacheable) {
			c.TTLMs, c.CacheScope = ttl, scope
		}}
	}
	a := startSubBackend(t, "a", harness.Stateless, cacheable(5000, "public"), func(s *mcp.Server) {
		harness.AddEcho(s, "echo")
		s.AddResource(&mcp.Resource{URI: "me://who", Name: "who"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			user, _ := r.Params.Meta["vmcp.test/user"].(string)
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "me://who", Text: "you are " + user}}}, nil
		})
		s.AddResource(&mcp.Resource{URI: "me://ask", Name: "ask"}, func(_ context.Context, r *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			if r.Params.InputResponses == nil {
				return &mcp.ReadResourceResult{InputRequests: mcp.InputRequestMap{"q": &mcp.ElicitParams{Message: "ok?", RequestedSchema: nameSchema}}}, nil
			}
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "me://ask", Text: "answered"}}}, nil
		})
	}, nil)
	b := startSubBackend(t, "b", harness.Stateless, cacheable(60000, "private"), func(s *mcp.Server) { harness.AddEcho(s, "echo") }, nil)
	v := harness.StartVMCP(t, nil, a.cfg, b.cfg)

	st, msg := modernRPC(t, v, `1`, "tools/list", "", nil)
	require.Equal(t, http.StatusOK, st)
	res := msg["result"].(map[string]any)
	require.Equal(t, float64(5000), res["ttlMs"], "the smallest non-zero ttlMs")
	require.Equal(t, "private", res["cacheScope"], "private if any backend said private")

	var wg sync.WaitGroup
	for i := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			user := fmt.Sprintf("user-%d", i)
			st, msg := modernRPC(t, v, `2`, "resources/read", "me://who", map[string]any{"uri": "me://who", "_meta": map[string]any{"vmcp.test/user": user}})
			require.Equal(t, http.StatusOK, st)
			res := msg["result"].(map[string]any)
			require.Equal(t, "you are "+user, res["contents"].([]any)[0].(map[string]any)["text"], "each caller gets its own result")
			require.Equal(t, float64(5000), res["ttlMs"], "the backend's hint passes on")
			require.NotContains(t, res["_meta"], "vmcp.dev/upstreamTtlMs")
		}()
	}
	wg.Wait()

	st, msg = modernRPC(t, v, `3`, "resources/read", "me://ask", map[string]any{"uri": "me://ask"})
	require.Equal(t, http.StatusOK, st)
	res = msg["result"].(map[string]any)
	require.Equal(t, "input_required", res["resultType"])
	st, msg = modernRPC(t, v, `4`, "resources/read", "me://ask", map[string]any{"uri": "me://ask", "requestState": res["requestState"],
		"inputResponses": map[string]any{"q": map[string]any{"action": "accept", "content": map[string]any{"v": "y"}}}})
	require.Equal(t, http.StatusOK, st, "%v", msg)
	res = msg["result"].(map[string]any)
	require.Equal(t, "answered", res["contents"].([]any)[0].(map[string]any)["text"])
	require.Equal(t, float64(0), res["ttlMs"], "a retry's result is never cacheable")
}

// Each input-requiring (MRTR) tool of the go-sdk conformance
// everything-server, run stateless behind vmcp, completes for a default
// (Modern) go-sdk client that can answer elicitation, sampling and roots.
func TestModernEverythingServerInputRequiredTools(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the everything-server")
	}
	v := harness.StartVMCP(t, func(c *config.Config) { c.Aggregation.ConflictResolution = config.StrategyPriority }, everythingServer(t))
	cs := connectAnswering(t, v, "")
	require.Equal(t, modernRevision, cs.InitializeResult().ProtocolVersion)
	want := map[string]string{
		"test_input_required_result_elicitation":     "Hello, ada!",
		"test_input_required_result_sampling":        "Sampling response: Paris",
		"test_input_required_result_list_roots":      "Client exposed 1 root(s): file:///work",
		"test_input_required_result_request_state":   "state-ok: requestState received and confirmation accepted",
		"test_input_required_result_multiple_inputs": "Paris ada — 1 root(s) visible",
		"test_input_required_result_multi_round":     "Multi-round complete: ada likes blue",
		"test_input_required_result_tampered_state":  "state-ok: requestState received and confirmation accepted",
		"test_input_required_result_capabilities":    "Capability-aware input requests fulfilled",
	}
	for tool, text := range want {
		t.Run(tool, func(t *testing.T) {
			res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: tool})
			require.NoError(t, err)
			require.False(t, res.IsError, "%+v", res.Content)
			require.Equal(t, text, harness.Text(t, res))
		})
	}
}
