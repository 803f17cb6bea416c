package legacy

import (
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/pagination"
	"github.com/vmcp/vmcp/pkg/policy"
	"github.com/vmcp/vmcp/pkg/wire"
)

// vmcp answers the four list requests itself, from the catalogue, with
// its own HMAC-protected keyset cursors (pkg/pagination, the same codec
// and key as the Modern dispatcher) over the principal's view
// (pkg/policy). The relay takes them before the go-sdk handler (serveList);
// anything the relay cannot take (a batch) reaches the go-sdk server, whose
// receiving middleware answers the same way (listMiddleware), so the SDK
// registry's own cursors never reach a client.

// listMembers maps each list verb to its result's list member.
var listMembers = map[string]string{
	"tools/list":               "tools",
	"prompts/list":             "prompts",
	"resources/list":           "resources",
	"resources/templates/list": "resourceTemplates",
}

// listKinds maps list verbs and list_changed notifications to the view
// digest they concern (policy.ListTools, ...).
var listKinds = map[string]int{
	"tools/list": policy.ListTools, "prompts/list": policy.ListPrompts,
	"resources/list": policy.ListResources, "resources/templates/list": policy.ListResources,
	"notifications/tools/list_changed":     policy.ListTools,
	"notifications/prompts/list_changed":   policy.ListPrompts,
	"notifications/resources/list_changed": policy.ListResources,
}

// serveList answers list request m of session s on w as one JSON body:
// the page of the principal's view, or the error (-32603 while no backend
// is ready, -32602 for a bad cursor).
func (d *Dispatcher) serveList(w http.ResponseWriter, s *clientSession, m *message) {
	var msg []byte
	var p struct {
		Cursor json.RawMessage `json:"cursor"`
	}
	cursor, err := "", error(nil)
	if len(m.Params) > 0 && string(m.Params) != "null" && json.Unmarshal(m.Params, &p) != nil {
		err = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: m.Method + ": params must be an object"}
	} else if cursor, err = pagination.ParamCursor(p.Cursor); err != nil {
		err = &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: m.Method + ": " + err.Error()}
	}
	var pg *policy.Page
	if err == nil {
		pg, err = d.list(s, m.Method, cursor)
	}
	if err == nil {
		buf := wire.Buffer()
		defer wire.Release(buf) // after the write below
		msg, err = listResult(*buf, m.ID, listMembers[m.Method], pg)
		*buf = msg
	}
	if err != nil {
		msg = wire.ErrorResponse(m.ID, err)
	}
	if werr := wire.NewEventWriter(w).Final(http.StatusOK, msg); werr != nil {
		d.undeliverable(m.Method+" response", s.id, "", werr)
	}
}

// listResult is the JSON-RPC response to id: {member: items, nextCursor}
// (nextCursor omitted on the last page; no 2026-07-28-only fields), built
// in b (reused: its contents are dropped) from the items' JSON as the
// catalogue encoded it.
func listResult(b []byte, id json.RawMessage, member string, pg *policy.Page) ([]byte, error) {
	b = slices.Grow(b[:0], 256+len(id)+len(pg.Next)+pg.SizeHint())
	b = append(wire.AppendResponseHead(b, id), '{')
	b = append(wire.AppendString(b, member), ':', '[')
	b, err := pg.AppendJSON(b)
	if err != nil {
		return nil, err
	}
	b = append(b, ']')
	if pg.Next != "" {
		b = wire.AppendString(append(b, `,"nextCursor":`...), pg.Next)
	}
	return append(b, '}', '}'), nil
}

// list is one page of verb after cursor over the view of s's principal
// (a bad cursor is -32602); the session remembers the view it was shown
// (for list_changed, see viewMarks).
func (d *Dispatcher) list(s *clientSession, verb, cursor string) (*policy.Page, error) {
	if !d.mgr.Ready() {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "no backend is available"}
	}
	pr := s.principal()
	v := d.opts.Policy.View(pr, d.agg.For(pr.Key()))
	pg, err := v.Page(d.opts.Codec, verb, pr.Tag(), cursor, d.opts.PageSize)
	if errors.Is(err, pagination.ErrInvalidCursor) {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: verb + ": " + err.Error()}
	}
	if err == nil && d.opts.Policy != nil {
		s.marks.seen(listKinds[verb], v)
	}
	return pg, err
}

// listMiddleware is receiving middleware answering the list requests that
// reach the go-sdk server (those the relay could not take) the same way,
// so the SDK registry's own cursors never reach a client.
func (d *Dispatcher) listMiddleware(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if listMembers[method] == "" {
			return next(ctx, method, req)
		}
		ss, _ := req.GetSession().(*mcp.ServerSession)
		s, err := d.session(ss)
		if err != nil {
			return nil, err
		}
		pg, err := d.list(s, method, paramCursor(req.GetParams()))
		if err != nil {
			return nil, err
		}
		return typedList(pg.Items(), pg.Next), nil
	}
}

// paramCursor is the cursor of a list request's params ("" when absent).
func paramCursor(p mcp.Params) string {
	switch p := p.(type) {
	case *mcp.ListToolsParams:
		if p != nil {
			return p.Cursor
		}
	case *mcp.ListPromptsParams:
		if p != nil {
			return p.Cursor
		}
	case *mcp.ListResourcesParams:
		if p != nil {
			return p.Cursor
		}
	case *mcp.ListResourceTemplatesParams:
		if p != nil {
			return p.Cursor
		}
	}
	return ""
}

// typedList is the SDK's result type for a page of items.
func typedList(items any, next string) mcp.Result {
	switch items := items.(type) {
	case []*mcp.Tool:
		return &mcp.ListToolsResult{Tools: items, NextCursor: next}
	case []*mcp.Prompt:
		return &mcp.ListPromptsResult{Prompts: items, NextCursor: next}
	case []*mcp.Resource:
		return &mcp.ListResourcesResult{Resources: items, NextCursor: next}
	default:
		return &mcp.ListResourceTemplatesResult{ResourceTemplates: items.([]*mcp.ResourceTemplate), NextCursor: next}
	}
}

// viewMarks are the digests of the views a session was last shown or told
// about, per list kind, so a list_changed reaches it only when its own
// view changed (see listChanged).
type viewMarks struct {
	mu    sync.Mutex
	known [3]bool
	sums  [3][sha256.Size]byte // by policy.ListTools, ListPrompts, ListResources
}

// seen records that the session was shown kind as v has it.
func (m *viewMarks) seen(kind int, v *policy.View) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.known[kind], m.sums[kind] = true, v.Digest(kind)
}

// changed reports whether kind differs in v from what the session saw
// last (true when unknown), and records v as seen.
func (m *viewMarks) changed(kind int, v *policy.View) bool {
	sum := v.Digest(kind)
	m.mu.Lock()
	defer m.mu.Unlock()
	diff := !m.known[kind] || m.sums[kind] != sum
	m.known[kind], m.sums[kind] = true, sum
	return diff
}

// markAll records every kind of the session principal's current view as
// seen (at initialize: the client has been told nothing else yet).
func (d *Dispatcher) markAll(s *clientSession) {
	if d.opts.Policy == nil {
		return
	}
	pr := s.principal()
	v := d.opts.Policy.View(pr, d.agg.For(pr.Key()))
	for k := range 3 {
		s.marks.seen(k, v)
	}
}

// listChanged reports whether a list_changed notification (method) is due
// to session ss: always without a policy, else only when the view of its
// principal changed since it was last shown or told.
func (d *Dispatcher) listChanged(ss *mcp.ServerSession, method string) bool {
	kind, ok := listKinds[method]
	if !ok || d.opts.Policy == nil || ss == nil {
		return true
	}
	s := d.lookup(ss.ID())
	if s == nil {
		return true
	}
	pr := s.principal()
	return s.marks.changed(kind, d.opts.Policy.View(pr, d.agg.For(pr.Key())))
}
