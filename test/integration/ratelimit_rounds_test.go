package integration

import (
	"context"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/ratelimit"
	"github.com/vmcp/vmcp/test/integration/harness"
)

// A Legacy backend's tool that elicits once, under a budget of one call:
// the call succeeds on both revisions and is counted once. The Modern
// client's answer resumes the parked backend call (no new backend
// request); it was counted again, refused with "retry after", and the
// refusal cancelled the parked call half done (a retry then found nothing
// parked).
func TestRateLimitParkedRetryRefusedCancelledTheCall(t *testing.T) {
	t.Parallel()
	for _, rev := range []struct{ name, version string }{{"legacy", clLegacy}, {"modern", ""}} {
		t.Run(rev.name, func(t *testing.T) {
			t.Parallel()
			b := harness.StartBackend(t, "lb", harness.Stateful, func(s *mcp.Server) {
				s.AddTool(&mcp.Tool{Name: "ask", InputSchema: map[string]any{"type": "object"}}, func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
					er, err := req.Session.Elicit(ctx, &mcp.ElicitParams{Message: "name?", RequestedSchema: nameSchema})
					if err != nil {
						return nil, err
					}
					v, _ := er.Content["v"].(string)
					return textResultOf("got " + v), nil
				})
			})
			v := harness.StartVMCP(t, func(c *config.Config) {
				c.RateLimits = []config.RateLimit{{Tools: []string{"lb_ask"}, Per: config.PerPrincipal, Requests: 1, Burst: 1,
					Period: config.Duration(time.Hour), OnStoreError: config.StoreDeny}}
			}, b.Config())
			awaitTools(t, v, "lb_ask")
			cs := v.Connect(t, rev.version, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{},
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"v": "ann"}}, nil
				}})
			res, err := cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "lb_ask", Arguments: map[string]any{}})
			require.NoError(t, err, "one call within a budget of one")
			assert.Equal(t, "got ann", harness.Text(t, res))
			reg := v.Server.Metrics().Registry
			assert.Equal(t, 1.0, rlCount(t, reg, "0", ratelimit.OutcomeAllowed), "counted once")
			assert.Zero(t, rlCount(t, reg, "0", ratelimit.OutcomeLimited))

			_, err = cs.CallTool(ctx(t), &mcp.CallToolParams{Name: "lb_ask", Arguments: map[string]any{}})
			rlRefusal(t, err, "rate_limits[0]")
		})
	}
}

// call_tool (tool search) of a limited tool draws on the tool's own
// budget, on both revisions: the second call under a budget of one is
// refused whether it goes through call_tool or directly (held).
func TestRateLimitCallToolMetaToolCountsTheTargetTool(t *testing.T) {
	t.Parallel()
	for _, rev := range []struct{ name, version string }{{"legacy", clLegacy}, {"modern", ""}} {
		t.Run(rev.name, func(t *testing.T) {
			t.Parallel()
			v := harness.StartVMCP(t, func(c *config.Config) {
				withToolSearch("")(c)
				c.RateLimits = []config.RateLimit{{Tools: []string{"weather_get_forecast"}, Per: config.PerPrincipal, Requests: 1, Burst: 1,
					Period: config.Duration(time.Hour), OnStoreError: config.StoreDeny}}
			}, searchBackends(t)...)
			cs := v.Connect(t, rev.version, nil)
			via := &mcp.CallToolParams{Name: "call_tool", Arguments: map[string]any{"name": "weather_get_forecast", "arguments": map[string]any{"city": "Paris"}}}
			_, err := cs.CallTool(ctx(t), via)
			require.NoError(t, err)
			_, err = cs.CallTool(ctx(t), via)
			rlRefusal(t, err, "rate_limits[0]")
		})
	}
}

// A read of a URI that only a backend's resource template names draws on
// a resources rule matching the URI, on both revisions (held).
func TestRateLimitReadThroughATemplateIsCounted(t *testing.T) {
	t.Parallel()
	for _, rev := range []struct{ name, version string }{{"legacy", clLegacy}, {"modern", ""}} {
		t.Run(rev.name, func(t *testing.T) {
			t.Parallel()
			b := harness.StartBackend(t, "tb", harness.Stateful, func(s *mcp.Server) {
				s.AddResourceTemplate(&mcp.ResourceTemplate{URITemplate: "mem://items/{id}", Name: "item"},
					func(_ context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
						return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: req.Params.URI, Text: "item"}}}, nil
					})
			})
			v := harness.StartVMCP(t, func(c *config.Config) {
				c.RateLimits = []config.RateLimit{{Resources: []string{"mem://items/*"}, Per: config.PerPrincipal, Requests: 1, Burst: 1,
					Period: config.Duration(time.Hour), OnStoreError: config.StoreDeny}}
			}, b.Config())
			cs := v.Connect(t, rev.version, nil)
			_, err := cs.ReadResource(ctx(t), &mcp.ReadResourceParams{URI: "mem://items/7"})
			require.NoError(t, err)
			_, err = cs.ReadResource(ctx(t), &mcp.ReadResourceParams{URI: "mem://items/8"})
			rlRefusal(t, err, "rate_limits[0]")
		})
	}
}
