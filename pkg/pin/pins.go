package pin

import (
	"cmp"
	"context"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/time/rate"

	"github.com/vmcp/vmcp/pkg/config"
)

// Outcomes counted in Options.Counter (label outcome).
const (
	OutcomeWarned     = "warned"      // warn: listed, logged, shown on /status
	OutcomeDenied     = "denied"      // deny: withheld until accepted
	OutcomeAllowed    = "allowed"     // allow: re-pinned silently
	OutcomeAccepted   = "accepted"    // an operator (or a reload naming it) accepted it
	OutcomeStoreError = "store_error" // the store failed; this node's own pin decided
)

// storeTimeout bounds one store operation.
const storeTimeout = 2 * time.Second

// Options configure Pins.
type Options struct {
	Mode    string                 // config.ToolChanges*; "" is warn
	Store   Store                  // nil: NewMemory()
	Log     *slog.Logger           // nil discards
	Counter *prometheus.CounterVec // by backend and outcome; nil: not counted
	// OnChange is called (not under any lock of Pins) when what deny
	// withholds may have changed: an accept, a mode change, another
	// node's accept. The aggregator re-admits its inventories then.
	OnChange func()
	// Now is the clock of pin retention (nil: time.Now; tests inject one).
	Now func() time.Time
	// MaxDropped bounds each backend's pins of tools it no longer offers
	// (0: MaxDroppedPins).
	MaxDropped int
	// MaxOwners bounds the principals whose own pins one backend keeps
	// (AdmitFor; default DefaultMaxOwners): beyond it the least recently
	// listed principal's pins are dropped, here and in the store.
	MaxOwners int
}

// Change is a tool whose offered definition differs from its pin.
type Change struct {
	Backend string `json:"backend"`
	// Principal is the tag (identity.Principal.Tag) of the principal whose
	// own view changed, for a per-principal backend ("": shared).
	Principal string    `json:"principal,omitempty"`
	Tool      string    `json:"tool"` // the backend's own name
	Pinned    string    `json:"pinned"`
	Offered   string    `json:"offered"`
	Outcome   string    `json:"outcome"` // warned | denied
	Since     time.Time `json:"since"`
}

// key is one pinned tool: owner is a principal's tag for a
// per-principal backend's tool (owners.go), "" for a shared backend's.
type key struct{ backend, owner, tool string }

// entry is what this node knows of one tool: the pin and the definition
// the backend offers now (hashes).
type entry struct {
	pinned, offered string
	since           time.Time // when offered first differed from pinned
	unstored        bool      // pinned here while the store failed: asked again next listing
}

// Pins decides, per backend tool, whether its definition is the pinned
// one, and what a different one means by mode. Safe for concurrent use.
type Pins struct {
	opts Options
	obs  sync.Mutex // one Admit or Accept at a time (store I/O inside)
	mu   sync.Mutex // guards the fields below
	mode string
	// armed are the config's accepts waiting for the next change seen
	// (owner ""): the hash it must offer, "" any (Configure).
	armed map[key]string
	// accepts are the entries of the last load's accept_tool_changes: a
	// reload applies only those new to it.
	accepts map[config.ToolRef]bool
	// armedUsed are the principals' tools an armed accept took (owners.go)
	armedUsed map[key]bool
	state     map[key]*entry
	seen      map[string]*owners // per backend: the principals with pins (owners.go)
	logs      *rate.Limiter
	stop      func()
	keep      time.Duration       // security.pin_retention (retain.go)
	live      map[string][]string // the tools each live shared backend offers, for refresh
	quit      chan struct{}       // ends refreshing; done is closed when it has
	done      chan struct{}

	closeOnce sync.Once
}

// New returns Pins with opts; it watches the store for other nodes'
// accepts, and refreshes the live backends' pins' retention, until Close.
func New(opts Options) *Pins {
	if opts.Store == nil {
		opts.Store = NewMemory()
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	p := &Pins{opts: opts, mode: cmp.Or(opts.Mode, config.ToolChangesWarn), armed: map[key]string{}, accepts: map[config.ToolRef]bool{}, armedUsed: map[key]bool{},
		state: map[key]*entry{}, seen: map[string]*owners{}, logs: rate.NewLimiter(rate.Every(time.Second), 10),
		keep: config.DefaultPinRetention, live: map[string][]string{}, quit: make(chan struct{}), done: make(chan struct{})}
	p.stop = opts.Store.Watch(p.heard)
	go p.refreshing(p.quit, p.done)
	return p
}

// Close stops watching the store and refreshing retention; calls after
// the first do nothing.
func (p *Pins) Close() {
	p.closeOnce.Do(func() {
		p.stop()
		close(p.quit)
		<-p.done
	})
}

// Admit returns the tools of backend that enter the catalogue: all of
// them but, in deny mode, those whose definition differs from its pin.
// Pins a tool seen for the first time, and forgets here the backend's
// tools tools no longer has (the store keeps their pins for the retention:
// Admit tells it what is offered, retain.go); a name listed twice is
// decided once (its first occurrence; later ones are left out). tools is
// not modified.
func (p *Pins) Admit(backend string, tools []*mcp.Tool) []*mcp.Tool {
	return p.admitAll(backend, "", tools)
}

// admitAll is Admit of the tools backend offers owner (a principal's
// tag; "": a shared backend).
func (p *Pins) admitAll(backend, owner string, tools []*mcp.Tool) []*mcp.Tool {
	p.obs.Lock()
	defer p.obs.Unlock()
	out := make([]*mcp.Tool, 0, len(tools))
	down := false // the store failed once: this listing's other tools skip it
	offered, live := make(map[string]bool, len(tools)), make([]string, 0, len(tools))
	for _, t := range tools {
		if offered[t.Name] { // a name listed twice: the aggregator keeps the first
			continue
		}
		offered[t.Name] = true
		if owner == "" { // a principal's own pins are bounded by MaxOwners, not retained (retain.go)
			live = append(live, t.Name)
		}
		if p.admit(key{backend, owner, t.Name}, t, &down) {
			out = append(out, t)
		}
	}
	p.mu.Lock()
	for k := range p.state {
		if k.backend == backend && k.owner == owner && !offered[k.tool] {
			delete(p.state, k)
		}
	}
	p.mu.Unlock()
	if !down && owner == "" {
		p.retain(backend, live) // retain.go
	}
	return out
}

// admit decides one tool; p.obs is held. *down: the store failed earlier
// in this listing (set on failure).
func (p *Pins) admit(k key, t *mcp.Tool, down *bool) bool {
	h := Hash(t)
	p.mu.Lock()
	e := p.state[k]
	if e != nil && e.offered == h && !e.unstored {
		keep := e.pinned == h || p.mode != config.ToolChangesDeny
		p.mu.Unlock()
		return keep
	}
	local := h
	if e != nil {
		local = e.pinned
	}
	p.mu.Unlock()
	pinned, stored := p.pin(k, local, down)
	p.mu.Lock()
	if e = p.state[k]; e == nil {
		e = &entry{}
		p.state[k] = e
	}
	e.pinned, e.offered, e.unstored = pinned, h, !stored
	if pinned == h {
		p.mu.Unlock()
		return true
	}
	e.since = time.Now().UTC()
	mode, armed := p.mode, p.takeArmed(k, h)
	p.mu.Unlock()
	return p.changed(k, h, pinned, mode, armed)
}

// pin asks the store for k's pin, writing local (this node's own pin, or
// the definition offered when it has none) if the store has none, and
// reports whether the store answered; on a store error, or without asking
// once *down, it counts and returns local, so a listing waits for at most
// one failed store operation.
func (p *Pins) pin(k key, local string, down *bool) (string, bool) {
	if *down {
		p.count(k.backend, OutcomeStoreError)
		return local, false
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	pinned, err := p.opts.Store.Pin(ctx, k.backend, k.stored(), local) // this node's pin, if any, was first here
	if err != nil {
		*down = true
		p.count(k.backend, OutcomeStoreError)
		p.warn("tool pin store failed; this node's own pin decides", k, "error", err)
		return local, false
	}
	return pinned, true
}

// changed acts on a definition h that differs from its pin, by mode (or
// accepts it, armed by the config), and reports whether it is listed.
func (p *Pins) changed(k key, h, pinned, mode string, armed bool) bool {
	switch {
	case armed || mode == config.ToolChangesAllow:
		outcome := OutcomeAllowed
		if armed {
			outcome = OutcomeAccepted
			p.opts.Log.Info("tool definition change accepted by the config", "backend", k.backend, "tool", k.tool, "principal", k.owner, "hash", h)
		}
		p.repin(k, h)
		p.count(k.backend, outcome)
		return true
	case mode == config.ToolChangesDeny:
		p.count(k.backend, OutcomeDenied)
		p.warn("tool definition changed; withheld until accepted (vmcp accept-tool-change)", k, "pinned", pinned, "offered", h)
		return false
	default:
		p.count(k.backend, OutcomeWarned)
		p.warn("tool definition changed; listed (security.tool_changes: warn)", k, "pinned", pinned, "offered", h)
		return true
	}
}

// repin makes h the pin of k, here and in the store.
func (p *Pins) repin(k key, h string) {
	p.mu.Lock()
	if e := p.state[k]; e != nil {
		e.pinned = h
	}
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), storeTimeout)
	defer cancel()
	if err := p.opts.Store.Set(ctx, k.backend, k.stored(), h); err != nil {
		p.count(k.backend, OutcomeStoreError)
		p.warn("tool pin store failed; the new pin is this node's alone", k, "error", err)
	}
}

// Forget drops what this node knows of backends' tools (removed by a
// reload), so /status no longer shows their changes; their pins stay in
// the store for security.pin_retention (no longer retained: retain.go),
// for a backend of the same name added back.
func (p *Pins) Forget(backends []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, b := range backends {
		delete(p.live, b)
	}
	for k := range p.state {
		if slices.Contains(backends, k.backend) {
			delete(p.state, k)
		}
	}
	for _, b := range backends {
		delete(p.seen, b)
	}
}

// heard applies another node's new pin.
func (p *Pins) heard(backend, tool, hash string) {
	p.mu.Lock()
	e := p.state[storedKey(backend, tool)]
	moved := e != nil && e.pinned != hash
	if moved {
		e.pinned = hash
	}
	p.mu.Unlock()
	if moved {
		p.notify()
	}
}

// Changes lists the tools whose offered definition differs from its pin,
// by backend and tool.
func (p *Pins) Changes() []Change {
	p.mu.Lock()
	defer p.mu.Unlock()
	outcome := OutcomeWarned
	if p.mode == config.ToolChangesDeny {
		outcome = OutcomeDenied
	}
	var out []Change
	for k, e := range p.state {
		if e.offered != e.pinned {
			out = append(out, Change{Backend: k.backend, Principal: k.owner, Tool: k.tool, Pinned: e.pinned, Offered: e.offered, Outcome: outcome, Since: e.since})
		}
	}
	slices.SortFunc(out, func(x, y Change) int {
		return cmp.Or(cmp.Compare(x.Backend, y.Backend), cmp.Compare(x.Tool, y.Tool), cmp.Compare(x.Principal, y.Principal))
	})
	return out
}

func (p *Pins) notify() {
	if p.opts.OnChange != nil {
		p.opts.OnChange()
	}
}
