package cluster

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/vmcp/vmcp/pkg/shrink"
	"github.com/vmcp/vmcp/pkg/telemetry"
)

// Options configure a Cluster; pkg/config's defaults (cluster.key_prefix,
// cluster.max_events_per_session) are the only ones: New fills in none.
type Options struct {
	Redis               Redis        // where cluster state lives; none named: memory implementations (one node)
	KeyPrefix           string       // prefix of every Redis key (required with Redis)
	NodeID              string       // this node's ID (default: random)
	AdvertiseURL        string       // base URL other nodes forward to (required with Redis)
	MaxEventsPerSession int          // messages, and streams, kept per session in the event log (required, > 0)
	Timing              Timing       // periods and TTLs; zero fields take DefaultTiming
	Logger              *slog.Logger // nil discards
	// EventsNotStored counts session events the event store could not
	// write (nil: counted nowhere else but the log).
	EventsNotStored prometheus.Counter
}

// Cluster is this node's view of the cluster: session ownership, the
// session event store, this node's GET streams and forwarding. Its
// heartbeat goroutine refreshes this node's records until Close.
type Cluster struct {
	self      NodeInfo
	timing    Timing
	log       *slog.Logger
	dir       Directory
	events    liveEvents   // the store, delivering standalone messages to own streams (ownstream.go)
	locks     streamLocks  // a stream's attach vs its session's stored messages
	redis     *redisConn   // nil in memory mode
	redisEvts *redisEvents // nil in memory mode
	transport *http.Transport
	owners    ownerCache  // for ForwardSession
	watches   nodeWatches // forwards in flight, by target node (watch.go)

	mu           sync.Mutex
	sessions     map[string]string  // owned by this node: session ID -> principal key
	perPrincipal map[string]int     // sessions owned here per principal key
	holders      map[string]*holder // live GET streams served here, by session
	closed       bool
	peaks        struct{ sessions, holders shrink.Peak }

	nextRefresh time.Time    // when session records are next re-asserted (heartbeat goroutine only)
	ownStreams  atomic.Int64 // own streams attached (ownstream.go)

	stop       chan struct{}
	done       chan struct{} // the heartbeat ended
	keeperDone chan struct{} // the stream keeper ended
}

// New builds this node's Cluster and starts its heartbeat. With no Redis
// named everything is in memory; otherwise AdvertiseURL is required. New
// does not need Redis to be reachable: until it is, Check fails.
func New(opts Options) (*Cluster, error) {
	c := &Cluster{
		timing:       opts.Timing.withDefaults(),
		log:          opts.Logger,
		sessions:     map[string]string{},
		perPrincipal: map[string]int{},
		holders:      map[string]*holder{},
		stop:         make(chan struct{}),
		done:         make(chan struct{}),
		keeperDone:   make(chan struct{}),
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.self = NodeInfo{ID: opts.NodeID, URL: opts.AdvertiseURL}
	if c.self.ID == "" {
		c.self.ID = "node-" + rand.Text()[:10]
	}
	maxEvents := opts.MaxEventsPerSession
	if maxEvents <= 0 {
		return nil, errors.New("cluster: a positive bound of events per session is required (cluster.max_events_per_session)")
	}
	if !opts.Redis.Enabled() {
		c.dir, c.events = newMemoryDirectory(), liveEvents{newMemEvents(maxEvents), c}
	} else {
		if opts.AdvertiseURL == "" {
			return nil, errors.New("cluster: an advertise URL is required with Redis (cluster.advertise_url)")
		}
		if opts.KeyPrefix == "" {
			return nil, errors.New("cluster: a Redis key prefix is required with Redis (cluster.key_prefix)")
		}
		rc, err := newRedisConn(opts.Redis, opts.KeyPrefix, c.timing.OpTimeout, c.log)
		if err != nil {
			return nil, err
		}
		c.redis = rc
		c.redisEvts = newRedisEvents(rc, maxEvents, c.timing.SessionTTL, c.log, opts.EventsNotStored)
		c.dir, c.events = &redisDirectory{c: rc}, liveEvents{c.redisEvts, c}
	}
	c.transport = newTransport(c.timing.DialTimeout)
	c.beat(context.Background()) // announce now if possible; failures are retried by the heartbeat
	if c.redis != nil {
		c.log.Info("cluster: Legacy sessions coordinated through Redis", "node", c.self.ID, "advertise_url", c.self.URL, "redis", c.redis.addr, "redis_ok", c.Check() == nil)
	}
	go c.run()
	go c.keeper()
	return c, nil
}

// Self is this node.
func (c *Cluster) Self() NodeInfo { return c.self }

// EventStore is the session event store to give the Legacy SDK handler:
// Redis Streams in cluster mode, else memory; both keep at most
// MaxEventsPerSession messages and streams per session.
func (c *Cluster) EventStore() mcp.EventStore { return c.events }

// Check returns nil when the cluster state store is usable, else an error
// wrapping ErrUnavailable that names Redis and the cause. It does no I/O.
func (c *Cluster) Check() error {
	if c.redis == nil {
		return nil
	}
	return c.redis.err()
}

// Status is the cluster part of /readyz.
type Status struct {
	Node  NodeInfo `json:"node"`
	Store string   `json:"store"`           // "redis" or "memory"
	Redis string   `json:"redis,omitempty"` // "ok" or why not (cluster mode only)
	Owned int      `json:"sessions"`        // Legacy sessions owned by this node
	// Streams are the standalone GET streams this node serves; OwnStreams
	// of them on hijacked HTTP/1.x connections (no goroutine while idle).
	Streams    int `json:"streams"`
	OwnStreams int `json:"own_streams"`
}

// Status reports this node's cluster state (no I/O).
func (c *Cluster) Status() Status {
	c.mu.Lock()
	st := Status{Node: c.self, Store: "memory", Owned: len(c.sessions), Streams: len(c.holders), OwnStreams: c.OwnStreams()}
	c.mu.Unlock()
	if c.redis != nil {
		st.Store, st.Redis = "redis", "ok"
		if err := c.Check(); err != nil {
			st.Redis = err.Error()
		}
	}
	return st
}

// SessionStarted records this node as the owner of a new Legacy session
// created by principal (identity.Principal.Key; "" when anonymous). It
// fails when principal is not anonymous and already owns limit sessions
// here (ErrPrincipalLimit; limit <= 0: no limit), or when the record
// cannot be made (ErrUnavailable, ErrConflict); the session must then be
// refused.
func (c *Cluster) SessionStarted(ctx context.Context, session, principal string, limit int) error {
	c.mu.Lock()
	if principal != "" && limit > 0 && c.perPrincipal[principal] >= limit {
		c.mu.Unlock()
		return fmt.Errorf("%w (sessions.max_per_principal is %d); end one or retry later", ErrPrincipalLimit, limit)
	}
	c.perPrincipal[principal]++ // reserved while the record is made
	c.mu.Unlock()
	err := c.dir.Claim(ctx, session, c.self.ID, principal, c.timing.SessionTTL)
	c.mu.Lock()
	defer c.mu.Unlock()
	if err != nil {
		c.unreserve(principal)
		return err
	}
	c.sessions[session] = principal
	return nil
}

// forgetLocked drops session from those this node owns, and from its
// principal's count. Requires c.mu.
func (c *Cluster) forgetLocked(session string) {
	if p, ok := c.sessions[session]; ok {
		shrink.Delete(&c.sessions, &c.peaks.sessions, session)
		c.unreserve(p)
	}
}

// unreserve drops one session of principal from the count. Requires c.mu.
func (c *Cluster) unreserve(principal string) {
	if c.perPrincipal[principal]--; c.perPrincipal[principal] <= 0 {
		delete(c.perPrincipal, principal)
	}
}

// SessionPrincipal returns the principal key that created session, a
// session owned by this node; ok is false when this node does not own it.
func (c *Cluster) SessionPrincipal(session string) (principal string, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	principal, ok = c.sessions[session]
	return principal, ok
}

// SessionEnded removes the ownership record of an ended session (best
// effort: a record left behind expires after Timing.SessionTTL). The SDK
// handler deletes the session's events itself (EventStore.SessionClosed).
func (c *Cluster) SessionEnded(session string) {
	c.mu.Lock()
	c.forgetLocked(session)
	c.mu.Unlock()
	if err := c.dir.Release(context.Background(), session, c.self.ID); err != nil {
		c.log.Debug("cluster: session record not released; it will expire", "session", telemetry.SessionTag(session), "error", err)
	}
}

// liveOwner returns the live owner of a session: ErrNotFound if the session
// has no record or its owner is dead (answer 404), ErrUnavailable if Redis
// is unreachable, or has just come back and owners may not yet have
// re-asserted records lost with its data (answer 503).
func (c *Cluster) liveOwner(ctx context.Context, session string) (NodeInfo, error) {
	n, _, err := c.owner(ctx, session)
	return n, err
}

// owner is Owner plus the principal key that created the session.
func (c *Cluster) owner(ctx context.Context, session string) (NodeInfo, string, error) {
	n, p, err := c.dir.Lookup(ctx, session)
	if up := c.upSince(); errors.Is(err, ErrNotFound) && !up.IsZero() && time.Since(up) < c.recoveryWindow() {
		return n, "", fmt.Errorf("%w: %w (%s)", ErrUnavailable, errRecovering, c.redis.addr)
	}
	return n, p, err
}

// recoveryWindow is how long after Redis came back (as this node saw it) a
// missing record means "not re-asserted yet" (503) rather than "gone"
// (404): NodeTTL, the time any live node has to renew its record, and at
// least a heartbeat and a probe. Nodes see Redis return at different
// moments (a failover: each asks the sentinels, or a shard, on its own
// schedule), so one node's own beat after the outage is not enough: a
// failover longer than NodeTTL expires every record on the promoted
// replica, and a forward from a node that recovered first then found no
// owner and answered 404 (a lost session) while the owner was still
// re-announcing (TestClusterPrimaryKilledMidLoad/sentinel, 2 runs in 4).
func (c *Cluster) recoveryWindow() time.Duration {
	return max(c.timing.Heartbeat+c.timing.Probe, c.timing.NodeTTL)
}

// errRecovering: Redis is back after an outage and owners may not yet have
// re-registered the records it lost.
var errRecovering = errors.New("session owners are re-registering after a Redis outage")

func (c *Cluster) upSince() time.Time {
	if c.redis == nil {
		return time.Time{}
	}
	return c.redis.upSince()
}

// Node returns the live node with this ID (for example the owner named by
// a requestState), or ErrNotFound / ErrUnavailable.
func (c *Cluster) Node(ctx context.Context, id string) (NodeInfo, error) { return c.dir.Node(ctx, id) }

// Close stops the heartbeat and leaves the cluster: this node's session
// records and liveness record are removed (best effort: what cannot be
// removed expires). Sessions should be ended before Close.
func (c *Cluster) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	owned := c.owned()
	c.mu.Unlock()
	close(c.stop)
	<-c.done
	<-c.keeperDone
	c.endOwnStreams()
	ctx := context.Background()
	var errs []error
	for _, id := range owned {
		errs = append(errs, c.dir.Release(ctx, id, c.self.ID))
	}
	errs = append(errs, c.dir.Withdraw(ctx, c.self.ID))
	c.transport.CloseIdleConnections()
	if c.redis != nil {
		c.redisEvts.close()
		errs = append(errs, c.redis.close())
	}
	return errors.Join(errs...)
}

// owned lists this node's sessions. Requires c.mu.
func (c *Cluster) owned() []string {
	ids := make([]string, 0, len(c.sessions))
	for id := range c.sessions {
		ids = append(ids, id)
	}
	return ids
}

// ownedPrincipals copies this node's sessions with their principals.
// Requires c.mu.
func (c *Cluster) ownedPrincipals() map[string]string {
	return maps.Clone(c.sessions)
}
