// Package modern serves Modern MCP clients (protocol 2026-07-28 and later)
// statelessly: every POST carries its own protocol version and client
// capabilities in _meta, is parsed once, validated (headers, _meta, size,
// media type), routed through the aggregator's catalogue and sent to the
// backend by the call core (upstream.Core.Do: this package sends nothing
// itself), and answered with one JSON reply, or an SSE
// stream for subscriptions/listen (listen.go) and for a call with progress
// or logs to deliver (stream.go). No per-request
// mcp.ServerSession exists. Multi round-trip requests pass through Modern
// backends with sealed requestState and are parked for Legacy ones
// (forward.go, direct.go, park.go, park_stream.go).
package modern

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/mrtr"
	"github.com/vmcp/vmcp/pkg/pagination"
	"github.com/vmcp/vmcp/pkg/policy"
	"github.com/vmcp/vmcp/pkg/subscriptions"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// FirstVersion is the first protocol revision served by this package; a
// POST whose MCP-Protocol-Version header sorts at or after it is Modern.
const FirstVersion = wire.FirstModern

// Options configures the Modern dispatcher.
type Options struct {
	Exchanges      *tracing.Exchanges             // the server's, to report what a request carries (nil: none)
	Implementation *mcp.Implementation            // serverInfo in every result's _meta (required)
	Instructions   string                         // server/discover instructions
	PageSize       int                            // list page size (<= 0: everything on one page)
	MaxBodyBytes   int64                          // request body limit (413 beyond; <= 0: none)
	Codec          *pagination.Codec              // mints and checks list cursors (required)
	Policy         *policy.Policy                 // per-principal views of lists and listen streams (nil: everything)
	Capabilities   func() *mcp.ServerCapabilities // Modern capabilities (pkg/capabilities; required)
	Logger         *slog.Logger                   // required

	// State seals the requestState of input_required results (required).
	State *mrtr.Codec
	// ParkTimeout bounds how long a Legacy backend's call waits for the
	// client's retry between rounds before it is cancelled (> 0:
	// mrtr.park_timeout).
	ParkTimeout time.Duration
	// MaxParked and MaxParkedPerPrincipal bound the calls parked at once,
	// on this node and per authenticated principal (> 0: mrtr.max_parked,
	// mrtr.max_parked_per_principal); beyond them a call is refused naming
	// the limit.
	MaxParked, MaxParkedPerPrincipal int
	// MaxListens and MaxListensPerPrincipal bound the subscriptions/listen
	// streams open at once, on this node and per authenticated principal
	// (sessions.max, sessions.max_per_principal; <= 0: none); beyond them
	// a listen is refused naming the limit.
	MaxListens, MaxListensPerPrincipal int
	// NodeID is this node's cluster ID, sealed into the requestState of
	// parked calls ("" for a single node).
	NodeID string
	// Parked records parked calls (required; mrtr.NewMemory() on one node).
	Parked mrtr.Directory
	// ResumeOn, if set, serves a retry whose parked call lives on another
	// node (r's body is restored): it forwards r to node and answers w. It
	// returns an error only when nothing was written; the client then gets
	// -32602. Unset, such a retry gets -32602.
	ResumeOn func(w http.ResponseWriter, r *http.Request, node string) error
	// Core routes and sends every request to a backend (required: the
	// server's).
	Core *upstream.Core
	// Metrics counts undeliverable messages (required: the server's).
	Metrics *telemetry.Metrics
}

// errShutdown cancels parked calls when vmcp shuts down.
var errShutdown = errors.New("vmcp is shutting down")

// Dispatcher is the Modern half of the vmcp endpoint. It is an http.Handler
// for POSTs carrying MCP-Protocol-Version >= FirstVersion.
type Dispatcher struct {
	opts     Options
	core     *upstream.Core
	agg      *aggregator.Aggregator
	mgr      *backends.Manager
	subs     *subscriptions.Registry
	log      *slog.Logger
	info     json.RawMessage // opts.Implementation as JSON
	versions []string        // every version vmcp serves, both eras, newest first
	modern   []string        // the Modern subset of versions
	state    *mrtr.Codec
	parked   mrtr.Directory
	streams  sync.Map       // parked call ID → its *parkedStream (park_stream.go)
	limits   parkLimits     // parked calls in all and per principal (parklimit.go)
	listens  parkLimits     // listen streams in all and per principal
	mu       sync.Mutex     // orders enter against Close
	wg       sync.WaitGroup // listen streams and parked calls (see enter)
	closing  atomic.Bool    // Close was called: no new parked calls
}

// enter tracks one listen stream or parked call in d.wg until its done is
// called; after Close it tracks nothing (and reports false), so wg.Add
// never races Close's wg.Wait.
func (d *Dispatcher) enter() (done func(), ok bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closing.Load() {
		return func() {}, false
	}
	d.wg.Add(1)
	return d.wg.Done, true
}

// New builds the dispatcher over the catalogue of agg and the backends of
// mgr, and follows both for listen streams (catalogue changes, backends'
// resource updates). opts must be complete (vmcp.New builds them from the
// config and pkg/config's defaults): New fills in no defaults of its own
// and panics naming what is missing.
func New(agg *aggregator.Aggregator, mgr *backends.Manager, opts Options) *Dispatcher {
	if missing := opts.missing(); len(missing) > 0 {
		panic("modern: Options lack " + strings.Join(missing, ", "))
	}
	info, err := json.Marshal(opts.Implementation)
	if err != nil {
		panic("modern: Implementation does not marshal: " + err.Error())
	}
	versions := mcp.SupportedProtocolVersions()
	d := &Dispatcher{
		opts:     opts,
		core:     opts.Core,
		agg:      agg,
		mgr:      mgr,
		subs:     subscriptions.NewRegistry(mgr, opts.Logger, opts.Metrics.Undeliverable),
		log:      opts.Logger,
		info:     info,
		versions: versions,
		modern:   slices.DeleteFunc(slices.Clone(versions), func(v string) bool { return !wire.IsModern(v) }),
		state:    opts.State,
		parked:   opts.Parked,
		limits:   parkLimits{names: parkedNames},
		listens:  parkLimits{names: listenNames},
	}
	mgr.OnResourceUpdated(d.subs.ResourceUpdated)
	mgr.OnUndeliverable(d.undeliverable) // progress and logs that reach no call (stream.go)
	agg.OnChange(d.catalogueChanged)
	agg.OnOwnerChange(d.ownerChanged) // a principal's own view (ownviews.go)
	return d
}

// missing names the required options o lacks.
func (o *Options) missing() []string {
	var out []string
	for name, lacks := range map[string]bool{
		"Implementation": o.Implementation == nil, "Codec": o.Codec == nil, "Capabilities": o.Capabilities == nil,
		"Logger": o.Logger == nil, "State": o.State == nil, "ParkTimeout": o.ParkTimeout <= 0,
		"MaxParked": o.MaxParked <= 0, "MaxParkedPerPrincipal": o.MaxParkedPerPrincipal <= 0,
		"Parked": o.Parked == nil, "Core": o.Core == nil, "Metrics": o.Metrics == nil,
	} {
		if lacks {
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out
}

// Subscriptions returns the registry of open subscriptions/listen streams.
func (d *Dispatcher) Subscriptions() *subscriptions.Registry { return d.subs }

// Parked returns the directory of calls parked between input_required rounds.
func (d *Dispatcher) Parked() mrtr.Directory { return d.parked }

// closeWait bounds how long Close waits for listen streams and parked
// calls to wind down.
const closeWait = 10 * time.Second

// EndStreams ends every subscriptions/listen stream with its result (the
// first step of a graceful shutdown); calls in flight are left to finish.
func (d *Dispatcher) EndStreams() { d.subs.Close() }

// Close ends every open listen stream gracefully (each receives its
// SubscriptionsListenResult and its HTTP response ends), cancels parked
// calls upstream and closes idle backend sessions (and the keyed ones of
// a core of its own), waiting (bounded) for all of them.
func (d *Dispatcher) Close() {
	d.mu.Lock()
	d.closing.Store(true)
	d.mu.Unlock()
	d.subs.Close()
	d.parked.Range(func(c *mrtr.Call) bool {
		c.Cancel(errShutdown)
		return true
	})
	done := make(chan struct{})
	go func() { d.wg.Wait(); close(done) }()
	t := time.NewTimer(closeWait)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		d.log.Warn("modern dispatcher: listen streams or parked calls still winding down after close", "wait", closeWait)
	}
}

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
	// The principal's first request lists the backends that take its
	// credential (its own catalogue then has their tools).
	d.mgr.Discovered(r.Context(), identity.From(r.Context()), r.Header)
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
	if err := d.hidden(rq, m, params); err != nil {
		rq.fail(toWireError(err))
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

// hidden is the error of an unknown name for a call, get, read or
// completion of something the policy hides from the request's principal
// (upstream.Core.Hidden, HiddenCompletion), else nil.
func (d *Dispatcher) hidden(rq *request, m *method, params mcp.Params) error {
	if p, ok := params.(*mcp.CompleteParams); ok {
		return d.core.HiddenCompletion(identity.From(rq.r.Context()), p)
	}
	if m.name == nil {
		return nil
	}
	return d.core.Hidden(&upstream.Request{Method: rq.method, Name: m.name(params), Revision: upstream.RevisionModern,
		Principal: identity.From(rq.r.Context()), Header: rq.r.Header}) // Header: the Exchange hears the decision (audit log)
}
