// Package capabilities computes the server capabilities vmcp advertises from
// the capabilities of its backends and what vmcp can deliver to a client.
// The Legacy initialize result, the Modern server/discover result and the
// subscriptions/listen honored set are all built from Compute, so they agree.
package capabilities

import "github.com/modelcontextprotocol/go-sdk/mcp"

// Deliverable says which server-to-client flows vmcp carries to clients of
// one protocol revision. A flow that is not deliverable is never advertised.
type Deliverable struct {
	ListChanged     bool // notifications/{tools,resources,prompts}/list_changed
	ResourceUpdates bool // notifications/resources/updated for subscribed URIs
	Logging         bool // notifications/message (Legacy logging/setLevel; Modern _meta logLevel)
}

// Compute merges the backends' capabilities (nil entries are skipped) into
// the capabilities vmcp advertises. A kind (tools, resources, prompts,
// completions, logging) is present when any backend offers it; listChanged
// is set when d.ListChanged (vmcp refreshes its catalogue and notifies),
// resources.subscribe when d.ResourceUpdates and some backend supports it.
// The result is never nil (MCP lifecycle: capabilities is a required object).
func Compute(backends []*mcp.ServerCapabilities, d Deliverable) *mcp.ServerCapabilities {
	out := &mcp.ServerCapabilities{}
	for _, c := range backends {
		if c == nil {
			continue
		}
		if c.Tools != nil && out.Tools == nil {
			out.Tools = &mcp.ToolCapabilities{ListChanged: d.ListChanged}
		}
		if c.Prompts != nil && out.Prompts == nil {
			out.Prompts = &mcp.PromptCapabilities{ListChanged: d.ListChanged}
		}
		if c.Resources != nil {
			if out.Resources == nil {
				out.Resources = &mcp.ResourceCapabilities{ListChanged: d.ListChanged}
			}
			if c.Resources.Subscribe && d.ResourceUpdates {
				out.Resources.Subscribe = true
			}
		}
		if c.Completions != nil {
			out.Completions = &mcp.CompletionCapabilities{}
		}
		if c.Logging != nil && d.Logging {
			out.Logging = &mcp.LoggingCapabilities{}
		}
	}
	return out
}

// Honored is the subset of a subscriptions/listen request that vmcp will
// deliver (2026-07-28 subscriptions: the acknowledgement lists exactly what
// will be sent). List kinds need listChanged in caps; a resource URI needs
// resources.subscribe and canSubscribe(uri) (some backend serves it).
func Honored(caps *mcp.ServerCapabilities, want *mcp.NotificationSubscriptions, canSubscribe func(uri string) bool) mcp.NotificationSubscriptions {
	var got mcp.NotificationSubscriptions
	if want == nil || caps == nil {
		return got
	}
	got.ToolsListChanged = want.ToolsListChanged && caps.Tools != nil && caps.Tools.ListChanged
	got.PromptsListChanged = want.PromptsListChanged && caps.Prompts != nil && caps.Prompts.ListChanged
	got.ResourcesListChanged = want.ResourcesListChanged && caps.Resources != nil && caps.Resources.ListChanged
	if caps.Resources != nil && caps.Resources.Subscribe {
		for _, uri := range want.ResourceSubscriptions {
			if canSubscribe != nil && canSubscribe(uri) {
				got.ResourceSubscriptions = append(got.ResourceSubscriptions, uri)
			}
		}
	}
	return got
}
