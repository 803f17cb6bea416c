package legacy

import (
	"context"
	"slices"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
)

// A principal's own inventories (per-principal backends) are not in the
// go-sdk server's registry, so their changes made it send nothing: a
// Legacy client kept a list its principal's view no longer matched. Now
// every change of a principal's own view (aggregator.OnOwnerChange) sends
// that principal's Legacy sessions — and no other — the list_changed of
// each changed kind, through the session's own sending chain (so
// `targeted` still sends it only when the session's view changed since it
// was last shown one). The go-sdk has no call that sends one session a
// list_changed: ownerChanged sends a progress notification marked with
// ownListChangedKey, which ownListChanged rewrites before it is sent.

// ownListChangedKey marks a progress notification that stands for a
// list_changed to its session; its value is the list_changed method.
const ownListChangedKey = "vmcp.dev/ownListChanged"

// ownNoticeTimeout bounds one own-view list_changed send.
const ownNoticeTimeout = 10 * time.Second

// kindNotices maps a changed kind to the list_changed it is announced by.
var kindNotices = map[aggregator.Kind]string{
	aggregator.KindTools:     "notifications/tools/list_changed",
	aggregator.KindPrompts:   "notifications/prompts/list_changed",
	aggregator.KindResources: "notifications/resources/list_changed",
	aggregator.KindTemplates: "notifications/resources/list_changed",
}

// ownerChanged sends c's list_changed notifications to the Legacy
// sessions of c.Owner whose first lists were built (discovered).
func (d *Dispatcher) ownerChanged(c aggregator.OwnerChange) {
	var methods []string
	for _, k := range c.Kinds {
		if m := kindNotices[k]; m != "" && !slices.Contains(methods, m) {
			methods = append(methods, m)
		}
	}
	d.mu.Lock()
	var to []*clientSession
	for _, s := range d.sessions {
		if s.discovered.Load() && s.principal().Key() == c.Owner {
			to = append(to, s)
		}
	}
	d.mu.Unlock()
	for _, s := range to {
		for _, m := range methods {
			ctx, cancel := context.WithTimeout(context.Background(), ownNoticeTimeout)
			err := s.front.NotifyProgress(ctx, &mcp.ProgressNotificationParams{Meta: mcp.Meta{ownListChangedKey: m}})
			cancel()
			if err != nil {
				d.undeliverable(m, s.id, "", err)
			}
		}
	}
}

// ownListChanged is sending middleware (outside targeted): a progress
// notification marked by ownerChanged goes on as the list_changed it
// stands for; anything else passes.
func (d *Dispatcher) ownListChanged(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		p, ok := req.GetParams().(*mcp.ProgressNotificationParams)
		if method != "notifications/progress" || !ok || p == nil {
			return next(ctx, method, req)
		}
		m, marked := p.Meta[ownListChangedKey].(string)
		ss, _ := req.GetSession().(*mcp.ServerSession)
		if !marked {
			return next(ctx, method, req)
		}
		if ss == nil {
			return nil, nil
		}
		switch m {
		case "notifications/tools/list_changed":
			return next(ctx, m, &mcp.ServerRequest[*mcp.ToolListChangedParams]{Session: ss, Params: &mcp.ToolListChangedParams{}})
		case "notifications/prompts/list_changed":
			return next(ctx, m, &mcp.ServerRequest[*mcp.PromptListChangedParams]{Session: ss, Params: &mcp.PromptListChangedParams{}})
		case "notifications/resources/list_changed":
			return next(ctx, m, &mcp.ServerRequest[*mcp.ResourceListChangedParams]{Session: ss, Params: &mcp.ResourceListChangedParams{}})
		}
		return nil, nil // a mark vmcp never makes: never sent as progress
	}
}
