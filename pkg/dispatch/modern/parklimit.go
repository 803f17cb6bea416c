package modern

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/identity"
)

// parkLimits counts what clients hold on this node, in all and per
// authenticated principal: parked calls (each holds a backend session, and
// on the backend a request, until it completes or Options.ParkTimeout
// passes) and listen streams (each may hold a listen or a backend session
// per per-principal backend), so that no client holds them without end.
type parkLimits struct {
	names limitNames
	mu    sync.Mutex
	total int
	by    map[string]int // by principal key; anonymous callers are not counted here
}

// limitNames name what a parkLimits counts, its two config keys and what
// a principal at its limit can do, for the refusal's message.
type limitNames struct{ what, max, perPrincipal, hint string }

// Parked calls' and listen streams' limits.
var (
	parkedNames = limitNames{"parked calls", "mrtr.max_parked", "mrtr.max_parked_per_principal", "answer or cancel one first"}
	listenNames = limitNames{"listen streams", "sessions.max", "sessions.max_per_principal", "close one first"}
)

// enterParked tracks one call on the parked path (enter) and, when its
// client can be asked (so it may park between rounds), holds it within the
// parked-call limits of the principal on ctx; done ends both. A call whose
// client cannot be asked is bounded by its backend timeout instead. During
// shutdown, or beyond a limit, it returns the JSON-RPC error to answer.
func (d *Dispatcher) enterParked(ctx context.Context, asks bool) (done func(), err error) {
	exit, ok := d.enter()
	if !ok {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: errShutdown.Error()}
	}
	if !asks {
		return exit, nil
	}
	release, err := d.limits.admit(identity.From(ctx), d.opts.MaxParked, d.opts.MaxParkedPerPrincipal)
	if err != nil {
		exit()
		return nil, err
	}
	return func() { release(); exit() }, nil
}

// admit reserves one for p within max (the node's) and perPrincipal
// (<= 0: no limit), returning the release of the reservation, or the error
// naming the limit that was reached.
func (l *parkLimits) admit(p identity.Principal, max, perPrincipal int) (func(), error) {
	key := ""
	if !p.Anonymous() {
		key = p.Key()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	n := l.names
	if max > 0 && l.total >= max {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("too many %s on this node (%s is %d); retry later", n.what, n.max, max)}
	}
	if key != "" && perPrincipal > 0 && l.by[key] >= perPrincipal {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("too many %s for this principal (%s is %d); %s", n.what, n.perPrincipal, perPrincipal, n.hint)}
	}
	if l.by == nil {
		l.by = map[string]int{}
	}
	l.total++
	if key != "" {
		l.by[key]++
	}
	return sync.OnceFunc(func() {
		l.mu.Lock()
		defer l.mu.Unlock()
		l.total--
		if key != "" {
			if l.by[key]--; l.by[key] <= 0 {
				delete(l.by, key) // released with its key
			}
		}
	}), nil
}
