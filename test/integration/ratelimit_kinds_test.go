package integration

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// rlKindsBackend serves a prompt p, a resource mem://r and completions.
func rlKindsBackend(t *testing.T) *harness.Backend {
	opts := &mcp.ServerOptions{CompletionHandler: func(context.Context, *mcp.CompleteRequest) (*mcp.CompleteResult, error) {
		return &mcp.CompleteResult{Completion: mcp.CompletionResultDetails{Values: []string{"v"}}}, nil
	}}
	return flowBackend(t, "alpha", harness.Stateful, opts, nil, func(s *mcp.Server) {
		s.AddPrompt(&mcp.Prompt{Name: "p", Arguments: []*mcp.PromptArgument{{Name: "a"}}}, func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: "hi"}}}}, nil
		})
		s.AddResource(&mcp.Resource{URI: "mem://r", Name: "r"}, func(context.Context, *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
			return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: "mem://r", Text: "r"}}}, nil
		})
	})
}

// Gets, reads and completions are limited too, each kind by its own
// patterns (a completion by its backend's): the second of each under a
// budget of one is refused by the rule that names it, and a refusal does
// not draw on later rules. Both revisions.
func TestRateLimitCountsGetsReadsAndCompletions(t *testing.T) {
	t.Parallel()
	for _, rev := range []struct{ name, version string }{{"legacy", clLegacy}, {"modern", ""}} {
		t.Run(rev.name, func(t *testing.T) {
			t.Parallel()
			one := func(rule config.RateLimit, n int) config.RateLimit {
				rule.Per, rule.Requests, rule.Burst, rule.Period, rule.OnStoreError = config.PerPrincipal, n, n, config.Duration(time.Hour), config.StoreDeny
				return rule
			}
			v := harness.StartVMCP(t, func(c *config.Config) {
				c.RateLimits = []config.RateLimit{
					one(config.RateLimit{Prompts: []string{"alpha_p"}}, 1),
					one(config.RateLimit{Resources: []string{"mem://*"}}, 1),
					one(config.RateLimit{Backends: []string{"alpha"}}, 3),
				}
			}, rlKindsBackend(t).Config())
			cs := v.Connect(t, rev.version, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			get := func() error {
				_, err := cs.GetPrompt(ctx, &mcp.GetPromptParams{Name: "alpha_p"})
				return err
			}
			read := func() error {
				_, err := cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "mem://r"})
				return err
			}
			complete := func() error {
				_, err := cs.Complete(ctx, &mcp.CompleteParams{Ref: &mcp.CompleteReference{Type: "ref/prompt", Name: "alpha_p"},
					Argument: mcp.CompleteParamsArgument{Name: "a", Value: "x"}})
				return err
			}
			for _, k := range []struct {
				name string
				do   func() error
				rule string
			}{{"prompts/get", get, "rate_limits[0]"}, {"resources/read", read, "rate_limits[1]"}, {"completion/complete", complete, "rate_limits[2]"}} {
				require.NoError(t, k.do(), "the first %s", k.name)
				rlRefusal(t, k.do(), k.rule)
			}
		})
	}
}
