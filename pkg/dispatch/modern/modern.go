// Package modern serves Modern MCP clients (protocol 2026-07-28 and later)
// statelessly: every POST carries its own protocol version and client
// capabilities in _meta, is parsed once, validated (headers, _meta, size,
// media type), routed through the aggregator's catalogue to the backend's
// shared control connection, and answered with one JSON reply, or an SSE
// stream for subscriptions/listen. No per-request mcp.ServerSession exists.
package modern

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"slices"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/pagination"
	"github.com/vmcp/vmcp/pkg/subscriptions"
)

// FirstVersion is the first protocol revision served by this package; a
// POST whose MCP-Protocol-Version header sorts at or after it is Modern.
const FirstVersion = "2026-07-28"

// Options configures the Modern dispatcher.
type Options struct {
	Implementation *mcp.Implementation            // serverInfo in every result's _meta
	Instructions   string                         // server/discover instructions
	PageSize       int                            // list page size (<= 0: everything on one page)
	MaxBodyBytes   int64                          // request body limit (413 beyond; <= 0: none)
	Codec          *pagination.Codec              // mints and checks list cursors (required)
	Capabilities   func() *mcp.ServerCapabilities // Modern capabilities (pkg/capabilities)
	Logger         *slog.Logger                   // nil discards
}

// Dispatcher is the Modern half of the vmcp endpoint. It is an http.Handler
// for POSTs carrying MCP-Protocol-Version >= FirstVersion.
type Dispatcher struct {
	opts     Options
	agg      *aggregator.Aggregator
	mgr      *backends.Manager
	subs     *subscriptions.Registry
	log      *slog.Logger
	info     json.RawMessage // opts.Implementation as JSON
	versions []string        // every version vmcp serves, both eras, newest first
	modern   []string        // the Modern subset of versions
}

// New builds the dispatcher over the catalogue of agg and the backends of
// mgr. opts.Codec must be set.
func New(agg *aggregator.Aggregator, mgr *backends.Manager, opts Options) *Dispatcher {
	if opts.Codec == nil {
		panic("modern: Options.Codec is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Implementation == nil {
		opts.Implementation = &mcp.Implementation{Name: "vmcp"}
	}
	if opts.Capabilities == nil {
		opts.Capabilities = func() *mcp.ServerCapabilities { return &mcp.ServerCapabilities{} }
	}
	info, err := json.Marshal(opts.Implementation)
	if err != nil {
		panic("modern: Implementation does not marshal: " + err.Error())
	}
	versions := mcp.SupportedProtocolVersions()
	return &Dispatcher{
		opts:     opts,
		agg:      agg,
		mgr:      mgr,
		subs:     subscriptions.NewRegistry(),
		log:      opts.Logger,
		info:     info,
		versions: versions,
		modern:   slices.DeleteFunc(slices.Clone(versions), func(v string) bool { return v < FirstVersion }),
	}
}

// Subscriptions returns the registry of open subscriptions/listen streams.
func (d *Dispatcher) Subscriptions() *subscriptions.Registry { return d.subs }

// Close ends every open listen stream gracefully: each receives its
// SubscriptionsListenResult and its HTTP response ends.
func (d *Dispatcher) Close() { d.subs.Close() }

// ServeHTTP answers one Modern POST: 405 for other methods, 415 unless
// Content-Type is application/json, 413 beyond MaxBodyBytes, 202 for an
// accepted notification, else a JSON-RPC reply whose HTTP status follows
// the error code (-32601 → 404; -32602, -32020..-32022 → 400; else 200).
func (d *Dispatcher) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rq, ok := d.parse(w, r)
	if !ok {
		return
	}
	if rq.notification {
		d.notify(rq)
		return
	}
	m, jerr := lookup(rq.method)
	if jerr != nil {
		rq.fail(jerr)
		return
	}
	params, jerr := d.validate(rq, m)
	if jerr != nil {
		rq.fail(jerr)
		return
	}
	result, err := m.serve(d, rq, params)
	switch {
	case rq.written:
	case err != nil:
		rq.fail(toWireError(err))
	default:
		rq.reply(result)
	}
}
