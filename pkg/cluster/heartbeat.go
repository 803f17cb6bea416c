package cluster

import (
	"context"
	"time"

	"github.com/vmcp/vmcp/pkg/telemetry"
)

// run is the heartbeat: every Timing.Heartbeat it re-announces this node
// (and re-asserts its sessions' records when they are due or were lost);
// while Redis is unreachable it probes every Timing.Probe instead, and
// beats as soon as Redis is back.
func (c *Cluster) run() {
	defer close(c.done)
	t := time.NewTimer(c.timing.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-c.stop:
			return
		case <-t.C:
		}
		next := c.timing.Heartbeat
		if err := c.beat(context.Background()); err != nil {
			next = c.timing.Probe
		}
		t.Reset(next)
	}
}

// beat probes Redis if it is known to be down, then renews this node's
// record. It re-asserts every session record and event log of this node
// when they are due (every SessionTTL/3), when the node record was missing
// (Redis lost its data: restarted empty, flushed, failed over; or the
// record expired) and when Redis has just come back. A failed beat makes
// the next successful one re-assert everything.
func (c *Cluster) beat(ctx context.Context) error {
	recovered := false
	if c.redis != nil && c.redis.err() != nil {
		if err := c.redis.probe(ctx); err != nil {
			c.nextRefresh = time.Time{}
			return err
		}
		recovered = true
	}
	missing, err := c.dir.Announce(ctx, c.self, c.timing.NodeTTL)
	if err != nil {
		c.nextRefresh = time.Time{}
		return err
	}
	now := time.Now()
	if !missing && !recovered && now.Before(c.nextRefresh) {
		return nil
	}
	if missing && !c.nextRefresh.IsZero() {
		c.log.Warn("cluster: this node's record was missing from Redis (data lost or expired); re-asserting every session record", "node", c.self.ID)
	}
	if err := c.refresh(ctx); err != nil {
		c.nextRefresh = time.Time{}
		return err
	}
	c.nextRefresh = now.Add(c.timing.SessionTTL / 3)
	return nil
}

// refresh re-asserts every session record and renews every event log of
// this node (pipelined, in batches).
func (c *Cluster) refresh(ctx context.Context) error {
	c.mu.Lock()
	owned, principals := c.owned(), c.ownedPrincipals()
	c.mu.Unlock()
	err := c.dir.Refresh(ctx, c.self.ID, principals, c.timing.SessionTTL)
	if err == nil && c.redisEvts != nil {
		err = c.redisEvts.touch(ctx, owned, c.timing.SessionTTL)
	}
	c.releaseEnded(ctx, owned)
	return err
}

// releaseEnded releases the records of those of ids that ended while
// they were being refreshed: the refresh may have re-set a record just
// after SessionEnded deleted it, which would outlive its session by
// SessionTTL.
func (c *Cluster) releaseEnded(ctx context.Context, ids []string) {
	c.mu.Lock()
	var ended []string
	for _, id := range ids {
		if _, ok := c.sessions[id]; !ok {
			ended = append(ended, id)
		}
	}
	c.mu.Unlock()
	for _, id := range ended {
		if err := c.dir.Release(ctx, id, c.self.ID); err != nil {
			c.log.Debug("cluster: record of a session ended during its refresh not released; it will expire", "session", telemetry.SessionTag(id), "error", err)
		}
	}
}
