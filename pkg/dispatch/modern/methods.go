package modern

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/pagination"
	"github.com/vmcp/vmcp/pkg/policy"
	"github.com/vmcp/vmcp/pkg/wire"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// method is one entry of the method table: how to decode its params (once,
// into the SDK's params type), which param Mcp-Name mirrors, and its
// handler, which returns the marshaled result.
type method struct {
	decode func(json.RawMessage) (mcp.Params, error)
	name   func(mcp.Params) string // nil: no Mcp-Name for this method
	serve  func(*Dispatcher, *request, mcp.Params) ([]byte, error)
}

// def builds a method entry for params type *T.
func def[T any, P interface {
	*T
	mcp.Params
}](name func(P) string, serve func(*Dispatcher, *request, P) ([]byte, error)) *method {
	m := &method{
		decode: func(raw json.RawMessage) (mcp.Params, error) {
			p := P(new(T))
			if len(raw) == 0 {
				return p, nil
			}
			return p, json.Unmarshal(raw, p)
		},
		serve: func(d *Dispatcher, rq *request, p mcp.Params) ([]byte, error) { return serve(d, rq, p.(P)) },
	}
	if name != nil {
		m.name = func(p mcp.Params) string { return name(p.(P)) }
	}
	return m
}

// methods is the Modern method table.
var methods map[string]*method

func init() {
	methods = map[string]*method{
		"server/discover":          def((func(*mcp.DiscoverParams) string)(nil), (*Dispatcher).discover),
		"tools/list":               def((func(*listParams) string)(nil), (*Dispatcher).listTools),
		"resources/list":           def((func(*listParams) string)(nil), (*Dispatcher).listResources),
		"resources/templates/list": def((func(*listParams) string)(nil), (*Dispatcher).listTemplates),
		"prompts/list":             def((func(*listParams) string)(nil), (*Dispatcher).listPrompts),
		"tools/call":               def(func(p *callParams) string { return p.Name }, (*Dispatcher).callTool),
		"prompts/get":              def(func(p *mcp.GetPromptParams) string { return p.Name }, (*Dispatcher).getPrompt),
		"resources/read":           def(func(p *mcp.ReadResourceParams) string { return p.URI }, (*Dispatcher).readResource),
		"completion/complete":      def((func(*mcp.CompleteParams) string)(nil), (*Dispatcher).complete),
		"subscriptions/listen":     def((func(*mcp.SubscriptionsListenParams) string)(nil), (*Dispatcher).listen),
	}
	methods["tools/call"].decode = decodeCallTool // the hot path: no reflection
}

// listParams are the params of the four list verbs: the SDK's _meta base
// plus the raw cursor, so a non-string cursor is told apart (-32602).
type listParams struct {
	mcp.ParamsBase
	Cursor json.RawMessage `json:"cursor,omitempty"`
}

// discover answers server/discover: every version vmcp serves (both eras),
// the Modern capabilities, the instructions and serverInfo in _meta.
func (d *Dispatcher) discover(_ *request, _ *mcp.DiscoverParams) ([]byte, error) {
	res := &mcp.DiscoverResult{
		SupportedVersions: d.versions,
		Capabilities:      d.opts.Capabilities(),
		Instructions:      d.opts.Instructions,
	}
	res.ResultType = "complete"
	res.Meta = d.meta()
	res.CacheScope = "public"
	return json.Marshal(res)
}

func (d *Dispatcher) listTools(rq *request, p *listParams) ([]byte, error) {
	pg, err := d.page(rq, "tools/list", p.Cursor)
	if err != nil {
		return nil, err
	}
	res := &mcp.ListToolsResult{Tools: []*mcp.Tool{}, NextCursor: pg.Next}
	res.ResultType, res.Meta, res.Cacheable = "complete", d.meta(), d.listCache(rq, "tools/list")
	return spliceList(rq, res, pg)
}

func (d *Dispatcher) listResources(rq *request, p *listParams) ([]byte, error) {
	pg, err := d.page(rq, "resources/list", p.Cursor)
	if err != nil {
		return nil, err
	}
	res := &mcp.ListResourcesResult{Resources: []*mcp.Resource{}, NextCursor: pg.Next}
	res.ResultType, res.Meta, res.Cacheable = "complete", d.meta(), d.listCache(rq, "resources/list")
	return spliceList(rq, res, pg)
}

func (d *Dispatcher) listTemplates(rq *request, p *listParams) ([]byte, error) {
	pg, err := d.page(rq, "resources/templates/list", p.Cursor)
	if err != nil {
		return nil, err
	}
	res := &mcp.ListResourceTemplatesResult{ResourceTemplates: []*mcp.ResourceTemplate{}, NextCursor: pg.Next}
	res.ResultType, res.Meta, res.Cacheable = "complete", d.meta(), d.listCache(rq, "resources/templates/list")
	return spliceList(rq, res, pg)
}

func (d *Dispatcher) listPrompts(rq *request, p *listParams) ([]byte, error) {
	pg, err := d.page(rq, "prompts/list", p.Cursor)
	if err != nil {
		return nil, err
	}
	res := &mcp.ListPromptsResult{Prompts: []*mcp.Prompt{}, NextCursor: pg.Next}
	res.ResultType, res.Meta, res.Cacheable = "complete", d.meta(), d.listCache(rq, "prompts/list")
	return spliceList(rq, res, pg)
}

// spliceList is the JSON of res, an SDK list result with its list member
// (its last field) empty, with the page's items spliced into that member
// from the JSON the catalogue encoded once: json.Marshal of res with the
// items, without re-encoding them. Unless a stream is open it writes the
// whole response itself, built in a reused buffer (rq.written), and
// returns nil.
func spliceList(rq *request, res mcp.Result, pg *policy.Page) ([]byte, error) {
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	if !bytes.HasSuffix(b, []byte(":[]}")) { // the SDK moved the member: not spliceable
		return nil, fmt.Errorf("%T: list member is not its last field", res)
	}
	if rq.stream != nil {
		out := make([]byte, 0, len(b)+pg.SizeHint())
		if out, err = pg.AppendJSON(append(out, b[:len(b)-2]...)); err != nil {
			return nil, err
		}
		return append(out, ']', '}'), nil
	}
	buf := wire.Buffer()
	defer wire.Release(buf)
	out := slices.Grow(*buf, 64+len(rq.id)+len(b)+pg.SizeHint())
	out, err = pg.AppendJSON(append(wire.AppendResponseHead(out, rq.id), b[:len(b)-2]...))
	*buf = out
	if err != nil {
		return nil, err
	}
	*buf = append(out, ']', '}', '}')
	rq.write(http.StatusOK, *buf)
	rq.written = true
	return nil, nil
}

// page is keyset pagination over one sorted list of the view of the
// request's principal; a bad cursor (not a string, tampered, truncated,
// over-long, another verb's or another principal's) is -32602. While no
// backend is ready it fails with -32603, as Legacy lists do, since an
// empty success would read as "this server has nothing".
func (d *Dispatcher) page(rq *request, verb string, raw json.RawMessage) (*policy.Page, error) {
	if !d.mgr.Ready() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no backend is available"}
	}
	cursor, err := pagination.ParamCursor(raw)
	if err == nil {
		pr, v := d.view(rq)
		var pg *policy.Page
		if pg, err = v.Page(d.opts.Codec, verb, pr.Tag(), cursor, d.opts.PageSize); err == nil {
			return pg, nil
		}
	}
	if errors.Is(err, pagination.ErrInvalidCursor) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: verb + ": " + err.Error()}
	}
	return nil, err
}

// view is the request's principal and its part of the current catalogue
// (pkg/policy; everything without a policy).
func (d *Dispatcher) view(rq *request) (identity.Principal, *policy.View) {
	pr := identity.From(rq.r.Context())
	return pr, d.opts.Policy.View(pr, d.agg.For(pr.Key()))
}

// listCache is the caching hint of a list result (2026-07-28 caching):
// over the ready backends that contributed to the list, the smallest
// non-zero ttlMs and private if any said private. An authenticated
// request's list is always private: it is that principal's view (policy,
// per-principal backends), which a shared cache must not serve another.
func (d *Dispatcher) listCache(rq *request, verb string) mcp.Cacheable {
	h := mcpmsg.CacheHint{Private: !identity.From(rq.r.Context()).Anonymous()}
	for _, b := range d.mgr.Backends() {
		if bh, ok := b.ListCache(verb); ok {
			h = h.Merge(bh)
		}
	}
	return h.Cacheable()
}
