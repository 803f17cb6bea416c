package modern

import (
	"context"
	"fmt"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/vmcp/vmcp/pkg/identity"
)

// parkLimits counts the calls parked on this node, in all and per
// authenticated principal: each holds a backend session (and on the
// backend a request) until it completes or Options.ParkTimeout passes, so
// without a bound a client could hold sessions without end.
type parkLimits struct {
	mu    sync.Mutex
	total int
	by    map[string]int // by principal key; anonymous callers are not counted here
}

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

// admit reserves one parked call for p within max (the node's) and
// perPrincipal, returning the release of the reservation, or the error
// naming the limit that was reached.
func (l *parkLimits) admit(p identity.Principal, max, perPrincipal int) (func(), error) {
	key := ""
	if !p.Anonymous() {
		key = p.Key()
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.total >= max {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("too many parked calls on this node (mrtr.max_parked is %d); retry later", max)}
	}
	if key != "" && l.by[key] >= perPrincipal {
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError,
			Message: fmt.Sprintf("too many parked calls for this principal (mrtr.max_parked_per_principal is %d); answer or cancel one first", perPrincipal)}
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
