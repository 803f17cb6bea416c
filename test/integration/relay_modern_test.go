package integration

// The relay on a Modern backend session (a stateless backend keeps no
// Legacy session): a Legacy client's calls go as self-contained 2026-07-28
// POSTs carrying that client's capabilities, not through the go-sdk server
// and client.

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// Through the go-sdk server and client a Legacy call to a stateless backend
// cost ~400 KB and ~516 µs of vmcp CPU (make bench, sdk row); all three
// relayed methods now go raw (that their results carry no Modern fields:
// pkg/vmcp's TestModernBackendFieldsDoNotLeakToLegacyClients).
func TestLegacyCallsToStatelessBackendWentThroughTheSDK(t *testing.T) {
	b := harness.StartBackend(t, "sl", harness.Stateless, func(s *mcp.Server) { addRelayedMethods(s, "sl") })
	v := harness.StartVMCP(t, nil, b.Config())
	awaitTools(t, v, "sl_echo")
	cs := v.Connect(t, legacy, nil)

	require.Equal(t, "sl/echo:hi", callText(t, cs, "sl_echo", "hi"))
	rr, err := cs.ReadResource(ctx(t), &mcp.ReadResourceParams{URI: "test://doc"})
	require.NoError(t, err)
	require.Equal(t, "doc body", rr.Contents[0].Text)
	gp, err := cs.GetPrompt(ctx(t), &mcp.GetPromptParams{Name: "sl_greet"})
	require.NoError(t, err)
	require.Equal(t, "hello", gp.Messages[0].Content.(*mcp.TextContent).Text)
	for _, m := range []string{"tools/call", "resources/read", "prompts/get"} {
		require.Equal(t, 1.0, relayed(v, m), "%s to a stateless backend is relayed", m)
	}
}

// Each relayed request to a stateless backend carries its own session's
// capabilities and clientInfo is vmcp's: two Legacy sessions, one declaring
// elicitation and one not, call concurrently and each backend handler sees
// exactly its caller's (never the other session's cached encoding).
func TestLegacyClientsCapabilitiesMixedOnStatelessBackend(t *testing.T) {
	b := harness.StartBackend(t, "sl", harness.Stateless, func(s *mcp.Server) {
		s.AddTool(&mcp.Tool{Name: "caps", InputSchema: map[string]any{"type": "object"}}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			ip := req.Session.InitializeParams()
			if ip == nil || ip.Capabilities == nil {
				return nil, fmt.Errorf("no capabilities in the request's _meta")
			}
			text := fmt.Sprintf("elicitation=%v client=%s", ip.Capabilities.Elicitation != nil, ip.ClientInfo.Name)
			return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil
		})
	})
	v := harness.StartVMCP(t, nil, b.Config())
	awaitTools(t, v, "sl_caps")
	asks := v.Connect(t, legacy, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
		ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
			return &mcp.ElicitResult{Action: "decline"}, nil
		}})
	plain := v.Connect(t, legacy, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})

	const n = 20
	var wg sync.WaitGroup
	got := map[bool]map[string]int{true: {}, false: {}}
	var mu sync.Mutex
	for i := range 2 * n {
		elicits := i%2 == 0
		cs := map[bool]*mcp.ClientSession{true: asks, false: plain}[elicits]
		wg.Go(func() {
			res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "sl_caps"})
			text := fmt.Sprint(err)
			if err == nil {
				text = harness.Text(t, res)
			}
			mu.Lock()
			got[elicits][text]++
			mu.Unlock()
		})
	}
	wg.Wait()
	require.Equal(t, map[string]int{"elicitation=true client=vmcp": n}, got[true], "the session declaring elicitation")
	require.Equal(t, map[string]int{"elicitation=false client=vmcp": n}, got[false], "the session declaring none")
	require.Equal(t, float64(2*n), relayed(v, "tools/call"))
}

// A Legacy client whose connection dropped mid-call (no
// notifications/cancelled) left a stateless backend's handler running to
// the backend timeout: the go-sdk path does not end it. The relay closes
// the call's stream, which the backend MUST treat as cancellation
// (2026-07-28 Streamable HTTP; a go-sdk server does with
// PropagateRequestCancellation).
func TestLegacyDroppedCallToStatelessBackendKeptRunning(t *testing.T) {
	started, ended, release := make(chan struct{}, 1), make(chan struct{}, 1), make(chan struct{})
	b := harness.StartBackend(t, "sl", harness.StatelessCancelling, func(s *mcp.Server) {
		echoTool(s, "sl", "echo")
		s.AddTool(&mcp.Tool{Name: "block", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, _ *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			started <- struct{}{}
			select {
			case <-ctx.Done():
				ended <- struct{}{}
			case <-release: // the test failed: let the backend close
			}
			return nil, ctx.Err()
		})
	})
	t.Cleanup(func() { close(release) }) // before the backend's own cleanup
	cfg := b.Config()
	cfg.Timeout = config.Duration(5 * time.Minute) // the go-sdk path ran the handler this long
	v := harness.StartVMCP(t, nil, cfg)
	awaitTools(t, v, "sl_block")
	cs := v.Connect(t, legacy, nil)

	callCtx, drop := context.WithCancel(ctx(t))
	req, err := http.NewRequestWithContext(callCtx, http.MethodPost, v.URL,
		strings.NewReader(`{"jsonrpc":"2.0","id":"drop-1","method":"tools/call","params":{"name":"sl_block","arguments":{}}}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", legacy)
	req.Header.Set("Mcp-Session-Id", cs.ID())
	errc := make(chan error, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			_, err = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		errc <- err
	}()
	<-started
	drop()
	require.Error(t, <-errc)
	select {
	case <-ended:
	case <-time.After(20 * time.Second):
		t.Fatal("the backend's handler still runs 20 s after the client's connection dropped")
	}
	require.Equal(t, "sl/echo:after", callText(t, cs, "sl_echo", "after"), "the session still serves calls")
}

// A Legacy client's own requestState and inputResponses (2025-11-25 has
// none) reached the backend on the relay's first round, as if the backend
// had issued that state: a client skipped the wizard's questions with a
// forged "round=2" state. The relay runs the rounds itself; the client's
// are dropped, on Modern and Legacy backends alike.
func TestLegacyClientRequestStateReachedBackend(t *testing.T) {
	for _, mode := range []harness.Mode{harness.Stateless, harness.Stateful} {
		t.Run(mode.String(), func(t *testing.T) {
			b := harness.StartBackend(t, "w", mode, addWizard)
			v := harness.StartVMCP(t, nil, b.Config())
			awaitTools(t, v, "w_wizard")
			cs := connectAnswering(t, v, legacy)
			res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "w_wizard", RequestState: "round=2;name=eve",
				InputResponses: mcp.InputResponseMap{"color": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"v": "red"}}}})
			require.NoError(t, err)
			require.Equal(t, "ada likes blue", harness.Text(t, res), "the backend saw only its own rounds")
			require.Equal(t, 1.0, relayed(v, "tools/call"))
		})
	}
}
