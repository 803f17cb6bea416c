package cluster

import (
	"sync"
	"time"
)

// keeperWorkers bounds the streams one keeper round checks at once (a
// stuck client holds a worker up to Timing.WriteTimeout).
const keeperWorkers = 32

// keeper is the one goroutine that keeps every standalone GET stream this
// node serves (started by New, ended by Close): every StreamTTL/3 it pings
// each stream's client and renews its lease.
func (c *Cluster) keeper() {
	defer close(c.keeperDone)
	t := time.NewTicker(c.timing.StreamTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		c.keepRound()
	}
}

// keepRound checks every stream once, keeperWorkers at a time.
func (c *Cluster) keepRound() {
	c.mu.Lock()
	sessions := make([]string, 0, len(c.holders))
	holders := make([]*holder, 0, len(c.holders))
	for s, h := range c.holders {
		sessions, holders = append(sessions, s), append(holders, h)
	}
	c.mu.Unlock()
	sem := make(chan struct{}, keeperWorkers)
	var wg sync.WaitGroup
	for i, h := range holders {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c.keep(sessions[i], h)
		})
	}
	wg.Wait()
}

// keep pings one stream's client and renews its lease; it ends the stream
// when the client is gone or the lease was taken by another stream. While
// Redis is unreachable the stream is kept.
func (c *Cluster) keep(session string, h *holder) {
	if h.ctx.Err() != nil {
		return
	}
	if h.sw.ping() != nil {
		h.cancel()
		return
	}
	ok, err := c.leases.Hold(h.ctx, leaseKey(session), h.token, c.timing.StreamTTL)
	if err == nil && !ok {
		c.log.Warn("cluster: GET stream lease taken by a newer stream; closing this one", "session", session)
		h.cancel()
	}
}
