package policy

import (
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/pagination"
)

// Page is one page of a view's list: items [Start, End) of its list Kind,
// and the cursor of the next page ("" on the last). Its JSON comes from
// the catalogue's encoded lists (AppendJSON), so serving it re-encodes
// nothing.
type Page struct {
	View       *View
	Kind       aggregator.Kind
	Start, End int
	Next       string
}

// Page is the page of list verb (tools/list, prompts/list, resources/list
// or resources/templates/list) after MCP cursor s of the view shown to the
// principal tagged owner, at most size items (pagination.Bounds); a bad
// cursor wraps pagination.ErrInvalidCursor, an unknown verb fails.
func (v *View) Page(c *pagination.Codec, verb, owner, s string, size int) (*Page, error) {
	p := &Page{View: v}
	var err error
	switch verb {
	case "tools/list":
		p.Kind = aggregator.KindTools
		p.Start, p.End, p.Next, err = pagination.Bounds(c, v.Tools, func(t *mcp.Tool) string { return t.Name }, verb, owner, s, size)
	case "prompts/list":
		p.Kind = aggregator.KindPrompts
		p.Start, p.End, p.Next, err = pagination.Bounds(c, v.Prompts, func(t *mcp.Prompt) string { return t.Name }, verb, owner, s, size)
	case "resources/list":
		p.Kind = aggregator.KindResources
		p.Start, p.End, p.Next, err = pagination.Bounds(c, v.Resources, func(r *mcp.Resource) string { return r.URI }, verb, owner, s, size)
	case "resources/templates/list":
		p.Kind = aggregator.KindTemplates
		p.Start, p.End, p.Next, err = pagination.Bounds(c, v.Templates, func(t *mcp.ResourceTemplate) string { return t.URITemplate }, verb, owner, s, size)
	default:
		return nil, fmt.Errorf("%s: not a list verb", verb)
	}
	if err != nil {
		return nil, err
	}
	return p, nil
}

// AppendJSON appends the page's items to dst as json.Marshal encodes
// each, comma separated (without the brackets).
func (p *Page) AppendJSON(dst []byte) ([]byte, error) {
	return p.View.AppendJSON(dst, p.Kind, p.Start, p.End)
}

// SizeHint is about the length of the page's JSON (AppendJSON): exact
// when the view shows its catalogue's whole list, else the page's items
// times the mean length of the catalogue items its span covers.
func (p *Page) SizeHint() int {
	if p.View.cat == nil || p.End <= p.Start {
		return 0
	}
	i, j := p.View.idx.span(p.Kind, p.Start, p.End)
	return p.View.cat.JSON(p.Kind).SizeHint(i, j) * (p.End - p.Start) / (j - i)
}

// Items is the page's items as the SDK's slice ([]*mcp.Tool, []*mcp.Prompt,
// []*mcp.Resource or []*mcp.ResourceTemplate; never nil), aliasing the view.
func (p *Page) Items() any {
	switch p.Kind {
	case aggregator.KindTools:
		return nonNil(p.View.Tools[p.Start:p.End])
	case aggregator.KindPrompts:
		return nonNil(p.View.Prompts[p.Start:p.End])
	case aggregator.KindResources:
		return nonNil(p.View.Resources[p.Start:p.End])
	}
	return nonNil(p.View.Templates[p.Start:p.End])
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
