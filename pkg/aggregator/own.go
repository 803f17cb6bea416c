package aggregator

import (
	"cmp"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Own configures the tools vmcp itself provides (tool search's
// search_tools and call_tool): they are listed and routed like a backend's,
// with a Route whose Backend is "" (Route.Own), and the policy always
// shows them.
type Own struct {
	// Tools returns vmcp's own tools for c, a catalogue whose Backends and
	// Routable (every backend tool) are filled; nil or empty: none.
	Tools func(c *Catalogue) []*mcp.Tool
	// Only lists vmcp's own tools alone (tools/list); every backend tool
	// stays routable by its name and in Routable.
	Only bool
}

// Own reports whether the route is one of vmcp's own tools.
func (r Route) Own() bool { return r.Backend == "" }

// callable is the catalogue's list of every callable tool (Routable and
// vmcp's own, sorted by name) with its encoding, built on first use.
type callable struct {
	once  sync.Once
	tools []*mcp.Tool
	enc   *JSONList
}

// Callable is every tool a call can name, sorted by name: the backends'
// (listed or not) and vmcp's own, with its JSON encoding (as JSON's).
// Without Own.Only it is Tools.
func (c *Catalogue) Callable() ([]*mcp.Tool, *JSONList) {
	if !c.ownOnly {
		return c.Tools, c.JSON(KindTools)
	}
	c.call.once.Do(func() {
		c.call.tools = append(slices.Clone(c.Routable), c.own...)
		slices.SortFunc(c.call.tools, func(x, y *mcp.Tool) int { return cmp.Compare(x.Name, y.Name) })
		c.call.enc = encodeList(c.call.tools)
	})
	return c.call.tools, c.call.enc
}

// addOwn adds vmcp's own tools to c (after the backends' are built): an own
// tool's name shadows a backend tool of the same name, which is reported
// as a conflict and left out of Routable.
func (b *builder) addOwn(c *Catalogue) {
	c.Routable = c.Tools
	if b.p.Own == nil || b.p.Own.Tools == nil {
		return
	}
	own := b.p.Own.Tools(c)
	if len(own) == 0 {
		return
	}
	for _, t := range own {
		if e, ok := c.tools[t.Name]; ok {
			b.conflicts = append(b.conflicts, Conflict{KindTools, t.Name, "vmcp", e.route.Backend})
			c.Routable = slices.DeleteFunc(slices.Clone(c.Routable), func(x *mcp.Tool) bool { return x.Name == t.Name })
		}
		c.tools[t.Name] = toolEntry{tool: t, route: Route{Name: t.Name}}
	}
	c.own = own
	c.ownOnly = b.p.Own.Only
	listed := append(slices.Clone(own), c.Routable...)
	if c.ownOnly {
		listed = slices.Clone(own)
	}
	slices.SortFunc(listed, func(x, y *mcp.Tool) int { return cmp.Compare(x.Name, y.Name) })
	c.Tools = listed
}
