package upstream

import (
	"context"

	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/audit"
	"github.com/vmcp/vmcp/pkg/identity"
)

// Limiter refuses a request over a rate limit (pkg/ratelimit): Check
// takes one request of pr for the item of kind k named name on backend
// and returns the index of the rule that refused it with the client's
// JSON-RPC error, or -1 and nil.
type Limiter interface {
	Check(ctx context.Context, pr identity.Principal, k aggregator.Kind, backend, name string) (rule int, err error)
}

// SetLimiter makes Route, Pin and Admit refuse what l refuses (call before
// serving; nil: no limits).
func (c *Core) SetLimiter(l Limiter) { c.limiter = l }

// Resumed is Pin of backend without the rate limits, for a request that
// sends the backend nothing new: a parked call's retry delivers answers to
// the call its first round admitted (counting it again refused, and so
// cancelled, a call half done).
func (c *Core) Resumed(req *Request, backend string) (Target, error) {
	return c.pin(req, backend, "", nil)
}

// limitedKinds are the requests rate limits count, by method, with the
// kind their patterns match (a completion matches by backend only).
var limitedKinds = map[string]aggregator.Kind{
	"tools/call":          aggregator.KindTools,
	"prompts/get":         aggregator.KindPrompts,
	"resources/read":      aggregator.KindResources,
	"completion/complete": "completion",
}

// Admit checks req, bound for t, against the rate limits (Route and Pin
// do; a caller of Resolve does before sending): every matching rule
// counts it. A refusal is reported to the request's Exchange (the audit
// log's decision) and returned as the client's error.
func (c *Core) Admit(req *Request, t Target) error {
	k, ok := limitedKinds[req.Method]
	if c.limiter == nil || !ok {
		return nil
	}
	rule, err := c.limiter.Check(context.Background(), req.Principal, k, t.Backend.Name(), req.Name)
	if err != nil {
		c.decide(req, audit.Decision{Denied: true, By: audit.ByRateLimit, Rule: audit.RuleIndex(rule), Backend: t.Backend.Name()})
	}
	return err
}
