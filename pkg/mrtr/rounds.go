package mrtr

import (
	"context"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MaxRounds bounds the input rounds vmcp drives for one backend call.
const MaxRounds = 32

// MoreInput reports whether a backend's result asks for another round: an
// input_required result (needsInput, 2026-07-28), or a Legacy result that
// still carries inputRequests. A go-sdk server serving a Legacy revision
// fulfils one round of its handler's inputRequests itself (elicitation and
// the like on the session) and returns the next round's inputRequests and
// requestState in a plain result: the caller asks its client and calls
// again with inputResponses and that requestState.
func MoreInput(needsInput bool, reqs mcp.InputRequestMap) bool {
	return needsInput || len(reqs) > 0
}

// AskAll hands every request of reqs to the client at once (one
// input_required round) and waits for all the answers, keyed as reqs. It
// fails when ctx or the call ends first.
func (c *Call) AskAll(ctx context.Context, reqs mcp.InputRequestMap) (mcp.InputResponseMap, error) {
	ids := make([]string, 0, len(reqs))
	as := make([]*ask, 0, len(reqs))
	for id, p := range reqs {
		ids = append(ids, id)
		as = append(as, &ask{method: methodOf(p), params: p, reply: make(chan answer, 1)})
	}
	if err := c.send(ctx, as); err != nil {
		return nil, err
	}
	out := make(mcp.InputResponseMap, len(as))
	for i, a := range as {
		r, err := c.await(ctx, a)
		if err != nil {
			return nil, fmt.Errorf("input request %q: %w", ids[i], err)
		}
		out[ids[i]] = r
	}
	return out, nil
}
