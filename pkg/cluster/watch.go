package cluster

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// errOwnerGone cancels a forward whose target node was declared dead (its
// node record expired or was withdrawn) while the forward waited on it.
var errOwnerGone = errors.New("the node serving this request was declared dead")

// nodeWatches ends the forwards to a node once the cluster declares it
// dead: one watcher goroutine per node with forwards in flight checks the
// node's record every Timing.Heartbeat and cancels them all when it is
// gone. A frozen or partitioned node would otherwise hold every request
// forwarded to it for as long as the client waits.
type nodeWatches struct {
	mu sync.Mutex
	m  map[string]*nodeWatch
}

// nodeWatch is one node's watcher: the cancel funcs of its forwards.
type nodeWatch struct {
	next    int
	cancels map[int]context.CancelCauseFunc
	done    chan struct{} // closed when the last forward is released
}

// watchNode registers cancel to be called with errOwnerGone when node id
// is declared dead; release unregisters it (call it when the forward ends).
func (c *Cluster) watchNode(id string, cancel context.CancelCauseFunc) (release func()) {
	ws := &c.watches
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.m == nil {
		ws.m = map[string]*nodeWatch{}
	}
	w := ws.m[id]
	if w == nil {
		w = &nodeWatch{cancels: map[int]context.CancelCauseFunc{}, done: make(chan struct{})}
		ws.m[id] = w
		go c.watch(id, w)
	}
	k := w.next
	w.next++
	w.cancels[k] = cancel
	return func() {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		delete(w.cancels, k)
		if len(w.cancels) == 0 && ws.m[id] == w {
			delete(ws.m, id)
			close(w.done)
		}
	}
}

// watch is node id's watcher: it ends with its last forward, with the
// Cluster, or once id is declared dead, cancelling every forward to it.
func (c *Cluster) watch(id string, w *nodeWatch) {
	t := time.NewTicker(c.timing.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-w.done:
			return
		case <-c.stop:
			return
		case <-t.C:
		}
		ctx, cancel := context.WithTimeout(context.Background(), c.timing.OpTimeout)
		_, err := c.dir.Node(ctx, id)
		cancel()
		if errors.Is(err, ErrNotFound) {
			c.gone(id, w)
			return
		}
	}
}

// gone cancels every forward to node id (declared dead) and forgets w.
func (c *Cluster) gone(id string, w *nodeWatch) {
	ws := &c.watches
	ws.mu.Lock()
	defer ws.mu.Unlock()
	c.log.Info("cluster: node declared dead; ending the requests forwarded to it", "node", id, "requests", len(w.cancels))
	for _, cancel := range w.cancels {
		cancel(fmt.Errorf("%w (node %s)", errOwnerGone, id))
	}
	if ws.m[id] == w {
		delete(ws.m, id)
		close(w.done)
	}
}
