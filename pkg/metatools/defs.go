// Package metatools is vmcp's tool search as two tools of its own, the same
// on both revisions: search_tools ranks the catalogue's tools for a query
// (pkg/toolsearch) among those the caller's authorization allows, and
// call_tool runs a found tool by name, rewritten at the endpoint into the
// plain tools/call of that tool (Rewrite), so it takes the direct call's
// path. The index follows the catalogue, rebuilt off the request path.
package metatools

import (
	"fmt"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
)

// The two tools' names and search_tools' limit bounds.
const (
	SearchName   = "search_tools"
	CallName     = "call_tool"
	DefaultLimit = 5
	MaxLimit     = 50
)

// Description budget: the backends named in search_tools' description, the
// tool names shown per backend, and the description's length in bytes, so
// the two definitions stay under 6,000 bytes of JSON at any catalogue size.
const (
	maxBackendsNamed  = 40
	namesPerBackend   = 4
	maxNameBytes      = 40
	maxSummaryBytes   = 3500
	searchDescription = "Search the tools of the servers behind this gateway by what you want to do, in plain words " +
		"(e.g. \"create a GitHub issue\"). Returns the best matches with their name, description, inputSchema and server; " +
		"run one with call_tool, or call it by its name."
	callDescription = "Run a tool found with search_tools: name is its name as search_tools returned it, arguments its " +
		"arguments (an object matching its inputSchema). It runs exactly as a direct call of that tool would, " +
		"with its progress, logs and requests for input."
)

// Own is the aggregator configuration of the two tools: listed alone when
// only (list: search_only), else beside every tool (list: all). With
// private (an authorization policy is configured) search_tools'
// description names no backend, since one description serves every
// principal and some may not see every backend.
func Own(only, private bool) *aggregator.Own {
	defs := Definitions
	if private {
		defs = func(*aggregator.Catalogue) []*mcp.Tool { return definitions("") }
	}
	return &aggregator.Own{Tools: defs, Only: only}
}

// Definitions are the two tools for catalogue c; search_tools' description
// names c's backends with a few of their tools each, within a fixed budget.
func Definitions(c *aggregator.Catalogue) []*mcp.Tool { return definitions(summary(c)) }

// definitions are the two tools, summary ending search_tools' description.
func definitions(summary string) []*mcp.Tool {
	search := &mcp.Tool{
		Name:        SearchName,
		Description: searchDescription + summary,
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"query": map[string]any{"type": "string", "description": "What the tool should do, in plain words."},
				"limit": map[string]any{"type": "integer", "minimum": 1, "maximum": MaxLimit, "default": DefaultLimit,
					"description": "How many tools to return."},
			},
			"required": []string{"query"},
		},
		Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true, Title: "Search tools"},
	}
	call := &mcp.Tool{
		Name:        CallName,
		Description: callDescription,
		InputSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"name":      map[string]any{"type": "string", "description": "The tool's name, as search_tools returned it."},
				"arguments": map[string]any{"type": "object", "description": "The tool's arguments."},
			},
			"required": []string{"name"},
		},
		Annotations: &mcp.ToolAnnotations{Title: "Call a tool"},
	}
	return []*mcp.Tool{search, call}
}

// summary is " Servers: a (12 tools: x, y, …); b (…)." for c's backends in
// configured order, cut at maxSummaryBytes.
func summary(c *aggregator.Catalogue) string {
	byBackend := map[string][]string{}
	for _, t := range c.Routable {
		if _, r, ok := c.Tool(t.Name); ok {
			byBackend[r.Backend] = append(byBackend[r.Backend], r.Name) // the backend's own names: no prefix
		}
	}
	backends := c.Backends(aggregator.KindTools)
	if len(backends) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(" Servers:")
	for i, name := range backends {
		part := fmt.Sprintf(" %s (%s);", clip(name), sample(byBackend[name]))
		if i == maxBackendsNamed || b.Len()+len(part) > maxSummaryBytes {
			fmt.Fprintf(&b, " and %d more.", len(backends)-i)
			return b.String()
		}
		b.WriteString(part)
	}
	return strings.TrimSuffix(b.String(), ";") + "."
}

// sample is "N tools: the shortest few of names, …".
func sample(names []string) string {
	s := slices.Clone(names)
	slices.SortStableFunc(s, func(x, y string) int { return len(x) - len(y) })
	if len(s) > namesPerBackend {
		s = s[:namesPerBackend]
	}
	for i := range s {
		s[i] = clip(s[i])
	}
	more := ""
	if len(names) > len(s) {
		more = ", …"
	}
	return fmt.Sprintf("%d tools: %s%s", len(names), strings.Join(s, ", "), more)
}

// clip bounds a name shown in the description.
func clip(s string) string {
	if len(s) <= maxNameBytes {
		return s
	}
	return strings.ToValidUTF8(s[:maxNameBytes], "") + "…"
}
