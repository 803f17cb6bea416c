// Package aggregator merges the backends' tools, resources, resource
// templates and prompts into one immutable Catalogue with one routing table,
// resolving name conflicts by the configured strategy.
package aggregator

import "github.com/modelcontextprotocol/go-sdk/mcp"

// Inventory is everything one backend currently lists. The slices are the
// backend's own items; Build never mutates them.
type Inventory struct {
	Backend   string
	Tools     []*mcp.Tool
	Resources []*mcp.Resource
	Templates []*mcp.ResourceTemplate
	Prompts   []*mcp.Prompt
	// Announced are the kinds the backend announced as changed
	// (notifications/*/list_changed) since its previous inventory: they
	// reach OnChange listeners even when the merged lists look the same.
	Announced []Kind
	// Description is what the backend offers, in words (the operator's, or
	// the backend's own from its initialize result); tool search indexes it.
	Description string
}

// Route says where an advertised name or URI goes: the backend and the
// backend's own (original) tool name, prompt name, resource URI or template.
type Route struct {
	Backend string
	Name    string
}

// Kind names one of the four merged lists.
type Kind string

// The four merged kinds, named as in the list methods.
const (
	KindTools     Kind = "tools"
	KindResources Kind = "resources"
	KindTemplates Kind = "resourceTemplates"
	KindPrompts   Kind = "prompts"
)
