package cluster

import (
	"sync"
	"time"
)

// keeperWorkers bounds the streams one keeper round checks at once (a
// stuck client holds a worker up to Timing.WriteTimeout).
const keeperWorkers = 32

// keeper is the one goroutine that keeps every standalone GET stream this
// node serves (started by New, ended by Close): every Timing.StreamPing it
// pings each stream's client. It does no Redis I/O.
func (c *Cluster) keeper() {
	defer close(c.keeperDone)
	t := time.NewTicker(c.timing.StreamPing)
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
	holders := make([]*holder, 0, len(c.holders))
	for _, h := range c.holders {
		holders = append(holders, h)
	}
	c.mu.Unlock()
	sem := make(chan struct{}, keeperWorkers)
	var wg sync.WaitGroup
	for _, h := range holders {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c.keep(h)
		})
	}
	wg.Wait()
}

// keep pings one stream's client and ends the stream when the client is
// gone (the write failed or did not finish within Timing.WriteTimeout).
func (c *Cluster) keep(h *holder) {
	if h.ctx.Err() != nil {
		return
	}
	if h.ping() != nil {
		h.cancel()
	}
}
