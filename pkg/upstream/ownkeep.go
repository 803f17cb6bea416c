package upstream

import (
	"context"
	"errors"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/wire/mcpmsg"
)

// keep opens the stream's own session on b (bounded by b's timeout) and,
// the first time, starts the goroutine of l that keeps it open: when the
// backend ends it (restart, a forgotten session) it is reopened with
// backoff until l closes, its held resources subscribed again, and each
// told once (as changed, when set), since changes may have been missed.
func (l *Listens) keep(ctx context.Context, c *Core, o *ownSessions, b *backends.Backend, changed func(string)) error {
	cs, err := o.open(ctx, b)
	if err != nil {
		return mcpmsg.WireError(b.Name(), err)
	}
	o.mu.Lock()
	_, kept := o.kept[b.Name()]
	if changed != nil || !kept {
		o.kept[b.Name()] = changed
	}
	o.mu.Unlock()
	if kept {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return mcpmsg.WireError(b.Name(), errOwnClosed)
	}
	l.wg.Add(1)
	go func() {
		defer l.wg.Done()
		l.keepOpen(c, o, b, cs)
	}()
	return nil
}

// open opens (or returns) the stream's session on b, bounded by b's
// timeout.
func (o *ownSessions) open(ctx context.Context, b *backends.Backend) (*mcp.ClientSession, error) {
	ctx, cancel := context.WithTimeout(ctx, b.Timeout())
	defer cancel()
	return o.set.Get(ctx, b.Name())
}

// keepOpen waits for cs to end, then reopens the session on b with
// backoff, until l's owner ends or l closes (o's set refuses then).
func (l *Listens) keepOpen(c *Core, o *ownSessions, b *backends.Backend, cs *mcp.ClientSession) {
	for {
		_ = cs.Wait()
		backoff := listenMinBackoff
		for {
			if !sleepCtx(l.owner, backoff) {
				return
			}
			var err error
			if cs, err = o.open(l.owner, b); err == nil {
				break
			}
			if l.owner.Err() != nil || errors.Is(err, backends.ErrSessionClosed) {
				return
			}
			c.log.Warn("listen stream's backend session not reopened", "backend", b.Name(), "error", err)
			backoff = min(backoff*2, listenMaxBackoff)
		}
		o.reopened(l.owner, c, b.Name())
	}
}

// reopened subscribes again each resource held on backend's session and
// tells each holder once, then relists backend (its kept changed).
func (o *ownSessions) reopened(ctx context.Context, c *Core, backend string) {
	o.mu.Lock()
	var held []*heldOwn
	for k, h := range o.deliver {
		if k.backend == backend {
			held = append(held, h)
		}
	}
	changed := o.kept[backend]
	o.mu.Unlock()
	for _, h := range held {
		if err := c.raw(ctx, h.req, h.t); err != nil {
			c.log.Warn("resource subscription not renewed on the listen stream's reopened backend session", "backend", backend, "error", err)
		}
		h.deliver()
	}
	if changed != nil {
		changed("")
	}
}
