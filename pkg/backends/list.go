package backends

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/bulkgc"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// Bounds on one list walk over a backend's pages.
const (
	maxListPages = 1000
	maxListItems = 100_000
)

// list walks all four lists the backend advertises, following nextCursor to
// the end (MCP pagination). A repeated cursor or an over-long walk stops
// the walk and is logged; the items gathered so far are kept.
func (b *Backend) list(ctx context.Context, cs *mcp.ClientSession) (aggregator.Inventory, error) {
	hints := map[string]mcpmsg.CacheHint{}
	defer b.setHints(hints)
	return b.inventory(ctx, cs, hints)
}

// inventory is list's walk, recording each list's cache hint in hints.
func (b *Backend) inventory(ctx context.Context, cs *mcp.ClientSession, hints map[string]mcpmsg.CacheHint) (aggregator.Inventory, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*b.Timeout())
	defer cancel()
	ph := b.ids.bulk.Phase() // the go-sdk leaves ~50 KB of garbage per tool listed
	defer ph.End()
	inv, caps := aggregator.Inventory{Backend: b.cfg.Name, Description: b.describe(cs)}, serverCaps(cs)
	var err error
	if caps.Tools != nil {
		inv.Tools, err = walk(ctx, b.log, &ph, "tools/list", func(ctx context.Context, c string) ([]*mcp.Tool, string, error) {
			r, err := cs.ListTools(ctx, &mcp.ListToolsParams{Cursor: c})
			if err != nil {
				return nil, "", err
			}
			hints["tools/list"] = hints["tools/list"].Merge(mcpmsg.HintOf(r.Cacheable, r.Meta))
			return r.Tools, r.NextCursor, nil
		})
		if err != nil {
			return inv, err
		}
	}
	if caps.Resources != nil {
		inv.Resources, err = walk(ctx, b.log, &ph, "resources/list", func(ctx context.Context, c string) ([]*mcp.Resource, string, error) {
			r, err := cs.ListResources(ctx, &mcp.ListResourcesParams{Cursor: c})
			if err != nil {
				return nil, "", err
			}
			hints["resources/list"] = hints["resources/list"].Merge(mcpmsg.HintOf(r.Cacheable, r.Meta))
			return r.Resources, r.NextCursor, nil
		})
		if err != nil {
			return inv, err
		}
		inv.Templates, err = walk(ctx, b.log, &ph, "resources/templates/list", func(ctx context.Context, c string) ([]*mcp.ResourceTemplate, string, error) {
			r, err := cs.ListResourceTemplates(ctx, &mcp.ListResourceTemplatesParams{Cursor: c})
			if err != nil {
				return nil, "", err
			}
			hints["resources/templates/list"] = hints["resources/templates/list"].Merge(mcpmsg.HintOf(r.Cacheable, r.Meta))
			return r.ResourceTemplates, r.NextCursor, nil
		})
		if err != nil {
			return inv, err
		}
	}
	if caps.Prompts != nil {
		inv.Prompts, err = walk(ctx, b.log, &ph, "prompts/list", func(ctx context.Context, c string) ([]*mcp.Prompt, string, error) {
			r, err := cs.ListPrompts(ctx, &mcp.ListPromptsParams{Cursor: c})
			if err != nil {
				return nil, "", err
			}
			hints["prompts/list"] = hints["prompts/list"].Merge(mcpmsg.HintOf(r.Cacheable, r.Meta))
			return r.Prompts, r.NextCursor, nil
		})
	}
	return inv, err
}

// maxDescriptionBytes bounds a backend's description as tool search
// indexes it (a backend's instructions can be long).
const maxDescriptionBytes = 2048

// describe is what the backend offers, in words: the operator's
// description (config), else the backend's own from its initialize result
// (serverInfo's title and description, then its instructions), at most
// maxDescriptionBytes.
func (b *Backend) describe(cs *mcp.ClientSession) string {
	d := b.cfg.Description
	if r := cs.InitializeResult(); d == "" && r != nil {
		var parts []string
		if r.ServerInfo != nil {
			parts = append(parts, r.ServerInfo.Title, r.ServerInfo.Description)
		}
		parts = append(parts, r.Instructions)
		parts = slices.DeleteFunc(parts, func(s string) bool { return strings.TrimSpace(s) == "" })
		d = strings.Join(parts, ". ")
	}
	if len(d) > maxDescriptionBytes {
		d = strings.ToValidUTF8(d[:maxDescriptionBytes], "")
	}
	return d
}

// serverCaps are the capabilities cs's backend declared (none if unknown).
func serverCaps(cs *mcp.ClientSession) *mcp.ServerCapabilities {
	if r := cs.InitializeResult(); r != nil && r.Capabilities != nil {
		return r.Capabilities
	}
	return &mcp.ServerCapabilities{}
}

// walk follows a backend's pages until nextCursor is absent. A cursor seen
// before (a walk that does not advance) or more than maxListPages pages or
// maxListItems items ends the walk with a logged fault, keeping what it has.
func walk[T any](ctx context.Context, log *slog.Logger, ph *bulkgc.Phase, verb string, page func(context.Context, string) ([]T, string, error)) ([]T, error) {
	var all []T
	seen := map[string]bool{}
	cursor := ""
	for pages := 0; ; pages++ {
		items, next, err := page(ctx, cursor)
		if err != nil {
			return all, fmt.Errorf("%s (page %d): %w", verb, pages+1, err)
		}
		all = append(all, items...)
		ph.Add(len(items))
		if next == "" {
			return all, nil
		}
		switch {
		case seen[next]:
			log.Error("backend pagination fault: nextCursor repeats; walk stopped", "verb", verb, "pages", pages+1, "items", len(all))
			return all, nil
		case pages+1 >= maxListPages || len(all) >= maxListItems:
			log.Error("backend pagination fault: walk too long; stopped", "verb", verb, "pages", pages+1, "items", len(all))
			return all, nil
		}
		seen[next] = true
		cursor = next
	}
}

// ListCache returns the hint b's last complete list walk saw for method
// (tools/list, prompts/list, resources/list, resources/templates/list);
// false while b is not ready or never listed it.
func (b *Backend) ListCache(method string) (mcpmsg.CacheHint, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	h, ok := b.hints[method]
	return h, ok && b.state == StateReady
}

// setHints records the cache hints of a list walk (on failure, the methods
// walked so far).
func (b *Backend) setHints(h map[string]mcpmsg.CacheHint) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.hints = h
}
