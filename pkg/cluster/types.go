// Package cluster lets several vmcp nodes serve one endpoint behind a load
// balancer that knows nothing about MCP sessions, coordinated through Redis.
//
// A Legacy client session lives on the node that created it (its owner). A
// Directory maps each session to its owner and records which nodes are
// live; a request for a session that arrives at another node is forwarded
// to the owner over HTTP, streamed (Forward). Server-to-client messages are
// kept in a per-session event log (an mcp.EventStore on Redis Streams) so a
// GET stream resumed with Last-Event-ID replays exactly what was missed. At
// most one standalone GET stream per session is live at a time; as every
// request of a session runs on its owner, the owner's own map of streams
// enforces it, with no Redis lease (ServeStream).
//
// An idle session costs Redis almost nothing: session records and event
// logs live for Timing.SessionTTL (90 s) and are refreshed every
// SessionTTL/3; what makes them valid is the owner's node record, renewed
// every heartbeat, which Lookup checks. The heartbeat also tells the node
// when Redis lost its data (the node record was missing), and the node then
// re-asserts every record at once.
//
// Every piece has two implementations: Redis (cluster.redis_url set) and
// memory (single node). Callers use Cluster and never branch on which one
// is in use. With Redis unreachable, Check fails and requests that need
// Redis are refused (503); nothing falls back to memory.
package cluster

import (
	"context"
	"errors"
	"time"
)

// NodeInfo names a live vmcp node: its ID and the base URL (scheme://host:port)
// other nodes forward requests to; the request path is kept.
type NodeInfo struct {
	ID  string `json:"id"`
	URL string `json:"url"`
}

// Errors returned by this package; test with errors.Is.
var (
	// ErrNotFound: no such session record, or its owner node is not live.
	ErrNotFound = errors.New("cluster: not found")
	// ErrConflict: another node already owns the session ID.
	ErrConflict = errors.New("cluster: session ID owned by another node")
	// ErrUnavailable: the cluster state store (Redis) is unreachable or
	// recovering; the wrapping error names the cause.
	ErrUnavailable = errors.New("cluster state store (Redis) unavailable")
	// ErrNotNode: a forwarding target is not a live node of this cluster.
	ErrNotNode = errors.New("cluster: forwarding target is not a live cluster node")
	// ErrLoop: the request was already forwarded once (or targets this node).
	ErrLoop = errors.New("cluster: request already forwarded; not forwarding again")
	// ErrUnreachable: the target node did not accept the connection (it is
	// most likely dead); nothing was written to the client.
	ErrUnreachable = errors.New("cluster: node unreachable")
	// ErrForbidden: the session belongs to another principal (answer 403).
	ErrForbidden = errors.New("cluster: the session belongs to another principal")
	// ErrPrincipalLimit: the principal already holds its maximum number of
	// sessions on this node (sessions.max_per_principal).
	ErrPrincipalLimit = errors.New("too many client sessions for this principal")
)

// Directory maps Legacy client sessions to their owner nodes, and to the
// principal (identity.Principal.Key, "" when anonymous) that created them,
// and tracks which nodes are live. Records expire unless refreshed; all methods are
// safe for concurrent use and fail with ErrUnavailable when the store is
// unreachable.
type Directory interface {
	// Announce records n as live for ttl (the node heartbeat). missing
	// reports that n had no live record before (first announce, expired,
	// or lost with Redis data): the caller should then Refresh everything.
	Announce(ctx context.Context, n NodeInfo, ttl time.Duration) (missing bool, err error)
	// Withdraw removes node id's liveness record (graceful leave).
	Withdraw(ctx context.Context, id string) error
	// Node returns the live node id, or ErrNotFound.
	Node(ctx context.Context, id string) (NodeInfo, error)
	// Nodes lists the live nodes, in no particular order.
	Nodes(ctx context.Context) ([]NodeInfo, error)
	// Claim records node as the owner of session, created by principal,
	// for ttl; ErrConflict if another owner holds the record.
	Claim(ctx context.Context, session, node, principal string, ttl time.Duration) error
	// Refresh re-asserts node's ownership of sessions (session ID ->
	// principal) for ttl, re-creating records that were lost (for example
	// with Redis data).
	Refresh(ctx context.Context, node string, sessions map[string]string, ttl time.Duration) error
	// Lookup returns the live owner of session and the principal that
	// created it: ErrNotFound if there is no record or the owner is not live.
	Lookup(ctx context.Context, session string) (NodeInfo, string, error)
	// Release removes session's record if node still owns it.
	Release(ctx context.Context, session, node string) error
}

// Timing are the cluster's periods and lifetimes; zero fields take the
// defaults shown (DefaultTiming).
type Timing struct {
	Heartbeat    time.Duration // node record refresh (and Redis data loss check) period (3s)
	NodeTTL      time.Duration // node liveness record lifetime (10s): a dead node's sessions are unknown after it
	SessionTTL   time.Duration // session record and event log lifetime, refreshed every SessionTTL/3: how long an orphan outlives its dead node, and the longest a record lost alone (a snapshot restore, a lagging replica) stays lost (90s)
	StreamPing   time.Duration // period of the SSE comment that checks each GET stream's client (2s)
	OpTimeout    time.Duration // bound on each Redis operation (1s)
	Probe        time.Duration // Redis re-probe period while unreachable (250ms)
	DialTimeout  time.Duration // connect timeout when forwarding to a node (2s)
	WriteTimeout time.Duration // bound on one write to a GET stream (10s)
	OwnerCache   time.Duration // how long a node reuses a session owner it looked up to forward to (1s; at most Heartbeat)
}

// DefaultTiming is the Timing used for zero fields (a new value each
// call: there is no process-wide timing to change).
func DefaultTiming() Timing {
	return Timing{
		Heartbeat:    3 * time.Second,
		NodeTTL:      10 * time.Second,
		SessionTTL:   90 * time.Second,
		StreamPing:   2 * time.Second,
		OpTimeout:    time.Second,
		Probe:        250 * time.Millisecond,
		DialTimeout:  2 * time.Second,
		WriteTimeout: 10 * time.Second,
		OwnerCache:   time.Second,
	}
}

func (t Timing) withDefaults() Timing {
	set := func(p *time.Duration, v time.Duration) {
		if *p <= 0 {
			*p = v
		}
	}
	d := DefaultTiming()
	set(&t.Heartbeat, d.Heartbeat)
	set(&t.NodeTTL, d.NodeTTL)
	set(&t.SessionTTL, d.SessionTTL)
	set(&t.StreamPing, d.StreamPing)
	set(&t.OpTimeout, d.OpTimeout)
	set(&t.Probe, d.Probe)
	set(&t.DialTimeout, d.DialTimeout)
	set(&t.WriteTimeout, d.WriteTimeout)
	set(&t.OwnerCache, d.OwnerCache)
	return t
}
