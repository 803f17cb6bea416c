package cluster

import (
	"context"
	"errors"
	"net/http"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vmcp/vmcp/pkg/shrink"
	"github.com/vmcp/vmcp/pkg/telemetry"
)

// liveEvents is the event store the SDK handler is given (EventStore): the
// node's store, which also writes each standalone message to its session's
// own stream, and ends that stream when the session closes.
type liveEvents struct {
	mcp.EventStore
	c *Cluster
}

// Append implements mcp.EventStore. A standalone message queued for the
// session's own stream counts as delivered even if storing it failed; a
// stream whose write fails or whose client lags maxQueued bytes behind
// ends (the client resumes from the store).
func (e liveEvents) Append(ctx context.Context, session, stream string, data []byte) error {
	if stream != "" {
		return e.EventStore.Append(ctx, session, stream, data)
	}
	unlock := e.c.locks.lock(session)
	err := e.EventStore.Append(ctx, session, stream, data)
	h := e.c.holder(session)
	unlock()
	if h == nil || h.own == nil {
		return err
	}
	if werr := h.own.send(data, h.cancel); werr != nil {
		if err == nil {
			return nil // stored: a resume replays it
		}
		return errors.Join(err, werr)
	}
	return nil
}

// SessionClosed implements mcp.EventStore: the session's events are
// forgotten, it is no longer this node's (no stream attaches to it any
// more) and its own stream, if any, ends.
func (e liveEvents) SessionClosed(ctx context.Context, session string) error {
	unlock := e.c.locks.lock(session)
	err := e.EventStore.SessionClosed(ctx, session)
	e.c.mu.Lock()
	e.c.forgetLocked(session)
	h := e.c.holders[session]
	e.c.mu.Unlock()
	unlock()
	if h != nil && h.own != nil {
		h.cancel()
	}
	return err
}

// holder returns the stream this node serves for session, if any.
func (c *Cluster) holder(session string) *holder {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.holders[session]
}

// serveOwn serves session's standalone stream itself (see ownStream):
// 404 if the session is no longer this node's, 400 if its history after
// last cannot be replayed; errNoHijack if the SDK handler must serve it.
func (c *Cluster) serveOwn(w http.ResponseWriter, r *http.Request, session string, last int) error {
	unlock := c.locks.lock(session)
	if _, ok := c.SessionPrincipal(session); !ok {
		unlock()
		http.Error(w, "session not found", http.StatusNotFound)
		return nil
	}
	var replay [][]byte
	for data, err := range c.events.EventStore.After(r.Context(), session, "", last) {
		if err != nil {
			unlock()
			c.log.Info("cluster: GET stream history cannot be replayed", "session", telemetry.SessionTag(session), "last_event_id", last, "error", err)
			http.Error(w, "failed to replay events", http.StatusBadRequest)
			return nil
		}
		if len(data) > 0 {
			replay = append(replay, data)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	o := &ownStream{timeout: c.timing.WriteTimeout, lastIdx: last, log: c.log}
	h := &holder{ctx: ctx, cancel: cancel, own: o, done: make(chan struct{})}
	o.mu.Lock() // writes of messages stored from here on wait for the replay
	c.mu.Lock()
	prev := c.holders[session]
	c.holders[session] = h
	c.mu.Unlock()
	unlock()
	context.AfterFunc(ctx, func() { c.endOwn(session, h) })
	if prev != nil { // a concurrent GET registered first: this one replaces it
		prev.cancel()
	}
	err := o.attachLocked(w, replay)
	if o.conn != nil { // counted once taken over: until then the endpoint counts its GET in flight
		o.counted = true
		c.ownStreams.Add(1)
	}
	o.mu.Unlock()
	if err != nil {
		cancel()
		<-h.done
	}
	return err
}

// endOwn ends own stream h of session and forgets it.
func (c *Cluster) endOwn(session string, h *holder) {
	h.own.close()
	c.mu.Lock()
	if c.holders[session] == h {
		shrink.Delete(&c.holders, &c.peaks.holders, session)
	}
	c.mu.Unlock()
	if h.own.counted { // set before close could take h.own.mu
		c.ownStreams.Add(-1)
	}
	close(h.done)
}

// OwnStreams is how many standalone GET streams this node serves on
// hijacked connections (their requests have returned: an endpoint's
// in-flight GET count misses them).
func (c *Cluster) OwnStreams() int { return int(c.ownStreams.Load()) }

// endOwnStreams ends every own stream (Close: the HTTP server does not
// track hijacked connections).
func (c *Cluster) endOwnStreams() {
	c.mu.Lock()
	var own []*holder
	for _, h := range c.holders {
		if h.own != nil {
			own = append(own, h)
		}
	}
	c.mu.Unlock()
	for _, h := range own {
		h.cancel()
	}
	for _, h := range own {
		<-h.done
	}
}
