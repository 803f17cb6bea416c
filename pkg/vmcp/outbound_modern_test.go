package vmcp_test

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// A per-principal (token_exchange) backend at the Modern revision has no
// control connection, and the Modern dispatcher sent prompts/get,
// resources/read, completion/complete and x-mcp-header tools on it: each
// failed "backend unavailable" (issue 29). They now go through the call
// core's sender (Do) as direct POSTs carrying alice's own token.

// perPrincipalModern is vmcp over vault, a Modern (stateless) go-sdk
// backend taking each user's own token (token_exchange; bob's exchange is
// refused, so only alice sees it), with an x-mcp-header tool "where" and
// a prompt "wizard" that asks for a name with input_required first. It
// returns alice's and bob's Modern client sessions (alice's answers
// nothing by itself: its multi round-trip is the test's), vault, and the
// checker of vault's tokens.
func perPrincipalModern(t *testing.T) (alice, bob *mcp.ClientSession, vault *gated, check func(string) string) {
	t.Helper()
	idp := outboundIdP(t, func(sub string) bool { return sub == "bob" })
	tokA, err := idp.ClientToken(t.Context(), "alice", "")
	require.NoError(t, err)
	tokB, err := idp.ClientToken(t.Context(), "bob", "")
	require.NoError(t, err)
	check = tokenChecker(t, idp, vaultAud)
	open, svc := startGated(t, "open"), startGated(t, "svc")
	vault = startGatedWith(t, "vault", harness.Stateless, addHeaderToolAndWizard)
	var revoked sync.Map
	vf := gatedFor(check, &revoked, "alice")
	vault.verify.Store(&vf)
	v := outboundVMCP(t, idp, open, vault, svc)
	opts := &mcp.ClientOptions{
		Capabilities:   &mcp.ClientCapabilities{Elicitation: &mcp.ElicitationCapabilities{}},
		MultiRoundTrip: &mcp.MultiRoundTripOptions{Disabled: true},
	}
	alice, _, err = connect(t, v.URL, tokA, "", opts)
	require.NoError(t, err)
	bob, _, err = connect(t, v.URL, tokB, "", nil)
	require.NoError(t, err)
	require.Contains(t, harness.ToolNames(t, alice), "vault_where", "vault saw %v", vault.values("Authorization"))
	return alice, bob, vault, check
}

// addHeaderToolAndWizard adds the tool "where" (its argument region
// mirrored in the Mcp-Param-Region header, which a go-sdk server requires)
// and the prompt "wizard" (input_required with requestState "asked",
// then "hello <name>").
func addHeaderToolAndWizard(s *mcp.Server) {
	schema := map[string]any{"type": "object", "properties": map[string]any{
		"region": map[string]any{"type": "string", "x-mcp-header": "Region"}}}
	s.AddTool(&mcp.Tool{Name: "where", InputSchema: schema}, func(_ context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "region:" + string(req.Params.Arguments)}}}, nil
	})
	s.AddPrompt(&mcp.Prompt{Name: "wizard"}, func(_ context.Context, req *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
		if req.Params.RequestState != "asked" {
			return &mcp.GetPromptResult{RequestState: "asked", InputRequests: mcp.InputRequestMap{"name": &mcp.ElicitParams{Message: "name?",
				RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"v": map[string]any{"type": "string"}}}}}}, nil
		}
		er, _ := req.Params.InputResponses["name"].(*mcp.ElicitResult)
		name := "?"
		if er != nil {
			name, _ = er.Content["v"].(string)
		}
		return &mcp.GetPromptResult{Description: "hello " + name}, nil
	})
}

// assertAlicesTokens checks that every request of kind vault served
// carried vault's own token for alice.
func assertAlicesTokens(t *testing.T, vault *gated, check func(string) string, kind string) {
	t.Helper()
	seen := vault.values("Authorization")[kind]
	require.NotEmpty(t, seen, "vault served no %s", kind)
	for _, h := range seen {
		tok, _ := strings.CutPrefix(h, "Bearer ")
		assert.Equal(t, "alice", check(tok), "%s carried vault's token for alice", kind)
	}
}

func TestModernCompletionOnPerPrincipalBackendWasUnavailable(t *testing.T) {
	alice, bob, vault, check := perPrincipalModern(t)
	ref := &mcp.CompleteReference{Type: "ref/prompt", Name: "vault_vault-prompt"}
	cr, err := alice.Complete(ctx10(t), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "x", Value: "v"}})
	require.NoError(t, err)
	require.Equal(t, []string{"vault-v"}, cr.Completion.Values)
	assertAlicesTokens(t, vault, check, "completion/complete")
	_, err = bob.Complete(ctx10(t), &mcp.CompleteParams{Ref: ref, Argument: mcp.CompleteParamsArgument{Name: "x", Value: "v"}})
	require.Error(t, err, "bob cannot see vault's prompt")
}

func TestModernPromptAndResourceOfPerPrincipalModernBackendWereUnavailable(t *testing.T) {
	alice, bob, vault, check := perPrincipalModern(t)
	prompts, resources := listed(t, alice)
	require.Contains(t, prompts, "vault_vault-prompt")
	require.Contains(t, resources, "doc://vault")
	pr, err := alice.GetPrompt(ctx10(t), &mcp.GetPromptParams{Name: "vault_vault-prompt"})
	require.NoError(t, err)
	require.Equal(t, "vault prompt", pr.Description)
	rr, err := alice.ReadResource(ctx10(t), &mcp.ReadResourceParams{URI: "doc://vault"})
	require.NoError(t, err)
	require.Equal(t, "vault doc", rr.Contents[0].Text)
	assertAlicesTokens(t, vault, check, "prompts/get")
	assertAlicesTokens(t, vault, check, "resources/read")

	prompts, resources = listed(t, bob)
	require.NotContains(t, prompts, "vault_vault-prompt")
	require.NotContains(t, resources, "doc://vault")
	_, err = bob.GetPrompt(ctx10(t), &mcp.GetPromptParams{Name: "vault_vault-prompt"})
	require.ErrorContains(t, err, "unknown prompt")
	_, err = bob.ReadResource(ctx10(t), &mcp.ReadResourceParams{URI: "doc://vault"})
	require.Error(t, err)
}

func TestModernHeaderToolOnPerPrincipalModernBackendWasUnavailable(t *testing.T) {
	alice, _, vault, check := perPrincipalModern(t)
	res, err := alice.CallTool(ctx10(t), &mcp.CallToolParams{Name: "vault_where", Arguments: map[string]any{"region": "eu-west"}})
	require.NoError(t, err)
	require.False(t, res.IsError, "%+v", res.Content)
	require.Contains(t, harness.Text(t, res), "eu-west")
	assert.Equal(t, []string{"eu-west"}, vault.values("Mcp-Param-Region")["tools/call"], "the backend got the argument's header")
	assertAlicesTokens(t, vault, check, "tools/call")
}

// The backend's input_required passes through to alice with its
// requestState sealed in vmcp's (never the backend's as is), and her
// retry reaches the backend with the backend's own state and her answer.
func TestModernInputRequiredPromptOfPerPrincipalModernBackendWasUnavailable(t *testing.T) {
	alice, _, vault, check := perPrincipalModern(t)
	first, err := alice.GetPrompt(ctx10(t), &mcp.GetPromptParams{Name: "vault_wizard"})
	require.NoError(t, err)
	require.True(t, first.NeedsInput(), "%+v", first)
	require.Contains(t, first.InputRequests, "name")
	require.NotEmpty(t, first.RequestState)
	require.NotEqual(t, "asked", first.RequestState, "the backend's requestState is sealed in vmcp's")
	out, err := alice.GetPrompt(ctx10(t), &mcp.GetPromptParams{Name: "vault_wizard", RequestState: first.RequestState,
		InputResponses: mcp.InputResponseMap{"name": &mcp.ElicitResult{Action: "accept", Content: map[string]any{"v": "ada"}}}})
	require.NoError(t, err)
	require.False(t, out.NeedsInput())
	require.Equal(t, "hello ada", out.Description)
	assertAlicesTokens(t, vault, check, "prompts/get")
}
