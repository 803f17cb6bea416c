package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/vmcp/vmcp/pkg/shrink"
)

// ForwardedHeader marks a request forwarded by a cluster node; its value is
// the forwarding node's ID. A node never forwards a request that carries
// it (loop guard): the receiving owner serves it or answers 404.
const ForwardedHeader = "Vmcp-Forwarded-By"

// Forwarded reports whether r was forwarded to this node by another node.
func Forwarded(r *http.Request) bool { return r.Header.Get(ForwardedHeader) != "" }

// newTransport is the client for node-to-node forwarding. It never uses an
// HTTP proxy from the environment: forwarded requests go straight to the
// node, never outside the cluster.
func newTransport(dial time.Duration) *http.Transport {
	return &http.Transport{
		Proxy:               nil,
		DialContext:         (&net.Dialer{Timeout: dial, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        256,
		MaxIdleConnsPerHost: 64,
		IdleConnTimeout:     90 * time.Second,
		DisableCompression:  true,
	}
}

// Forward serves r by sending it to the live cluster node at nodeURL (its
// base URL, as advertised; r's path is kept) and streaming the response
// back: request and response bodies, SSE included, are copied as they come,
// never buffered. r.Body must be unread (or replaced by what was read).
//
// On error nothing has been written to w and the caller answers: ErrLoop
// (r was already forwarded, or nodeURL is this node), ErrNotNode (nodeURL
// is not a live node: forwarding never leaves the cluster), ErrUnavailable
// (Redis), ErrUnreachable (the node refused the connection: treat its state
// as lost), ErrNotFound (the node was declared dead before it answered:
// its record expired or was withdrawn; watch.go), or another error (the node failed before answering; 502). A
// failure after the response started aborts the client connection, as the
// node's own failure would.
func (c *Cluster) Forward(w http.ResponseWriter, r *http.Request, nodeURL string) error {
	if Forwarded(r) || nodeURL == c.self.URL {
		return ErrLoop
	}
	nodes, err := c.dir.Nodes(r.Context())
	if err != nil {
		return err
	}
	for _, n := range nodes {
		if n.URL == nodeURL && n.ID != c.self.ID {
			return c.forward(w, r, n)
		}
	}
	return fmt.Errorf("%w: %q", ErrNotNode, nodeURL)
}

// ForwardSession serves r, a request of a Legacy session that does not live
// on this node, by forwarding it to the session's owner (as Forward), if
// principal (identity.Principal.Key of r) created the session. On error
// nothing has been written: ErrForbidden (another principal's session:
// answer 403, and nothing reached the owner), ErrNotFound (no live owner) and
// ErrUnreachable (the owner is dead) mean the session is gone (answer
// 404); ErrLoop means r was already forwarded or this node is named owner
// (answer from local state: 404); ErrUnavailable means Redis (503).
//
// Owners are cached for Timing.OwnerCache (at most a heartbeat): safe, because the
// owner re-checks that the session exists (404 otherwise) and a dead owner
// refuses the connection (ErrUnreachable); the entry is dropped on any
// forwarding error.
func (c *Cluster) ForwardSession(w http.ResponseWriter, r *http.Request, session, principal string) error {
	if Forwarded(r) {
		return ErrLoop
	}
	owner, ok := c.owners.get(session)
	if !ok {
		n, p, err := c.owner(r.Context(), session)
		if err != nil {
			return err
		}
		if n.ID == c.self.ID { // a record of ours for a session we no longer have
			_ = c.dir.Release(r.Context(), session, c.self.ID)
			return ErrLoop
		}
		owner = cachedOwner{n: n, principal: p}
		c.owners.put(session, owner, min(c.timing.Heartbeat, c.timing.OwnerCache))
	}
	if owner.principal != principal {
		return ErrForbidden
	}
	err := c.forward(w, r, owner.n)
	if err != nil {
		c.owners.drop(session)
	}
	return err
}

// ownerCacheMax bounds the cache; it is emptied when full.
const ownerCacheMax = 10000

// ownerCache remembers recently looked-up session owners.
type ownerCache struct {
	mu   sync.Mutex
	m    map[string]cachedOwner
	peak shrink.Peak // of m
}

type cachedOwner struct {
	n         NodeInfo
	principal string // key of the principal that created the session
	until     time.Time
}

func (oc *ownerCache) get(session string) (cachedOwner, bool) {
	oc.mu.Lock()
	defer oc.mu.Unlock()
	e, ok := oc.m[session]
	if !ok || time.Now().After(e.until) {
		return cachedOwner{}, false
	}
	return e, true
}

func (oc *ownerCache) put(session string, o cachedOwner, ttl time.Duration) {
	oc.mu.Lock()
	defer oc.mu.Unlock()
	if oc.m == nil || len(oc.m) >= ownerCacheMax {
		oc.m = map[string]cachedOwner{}
	}
	o.until = time.Now().Add(ttl)
	oc.m[session] = o
}

func (oc *ownerCache) drop(session string) {
	oc.mu.Lock()
	defer oc.mu.Unlock()
	shrink.Delete(&oc.m, &oc.peak, session)
}

// forward sends r to node n (already known to be live), as Forward. r's
// body must be in memory (edge.ReadBody): the proxy's transport reads a
// body once more after sending it, and net/http closes a request's own
// body once its response begins, which would cut the owner's stream.
func (c *Cluster) forward(w http.ResponseWriter, r *http.Request, n NodeInfo) error {
	if Forwarded(r) || n.ID == c.self.ID {
		return ErrLoop
	}
	target, err := url.Parse(n.URL)
	if err != nil || target.Host == "" {
		return fmt.Errorf("%w: node %s has a bad URL %q", ErrNotNode, n.ID, n.URL)
	}
	var failed error
	rp := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host // the owner sees the client's Host (origin checks)
			if xff := pr.In.Header["X-Forwarded-For"]; len(xff) > 0 {
				pr.Out.Header["X-Forwarded-For"] = xff // keep the chain from the balancer
			}
			pr.SetXForwarded()
			pr.Out.Header.Set(ForwardedHeader, c.self.ID)
		},
		Transport:      c.transport,
		FlushInterval:  -1, // flush every write: SSE and streamed responses pass through as they come
		ModifyResponse: func(resp *http.Response) error { dropRepeatedVary(w.Header(), resp.Header); return nil },
		ErrorLog:       log.New(io.Discard, "", 0),
		ErrorHandler:   func(_ http.ResponseWriter, _ *http.Request, err error) { failed = err },
	}
	ctx, cancel := context.WithCancelCause(r.Context())
	defer cancel(nil)
	defer c.watchNode(n.ID, cancel)()
	// every write to the client is bounded, as on the owner's own streams: a
	// client that stops reading a forwarded stream would hold this node's
	// proxy (and its connection to the owner) for as long as it stays
	sw := &streamWriter{w: w, rc: http.NewResponseController(w), timeout: c.timing.WriteTimeout}
	defer sw.finish()
	rp.ServeHTTP(sw, r.WithContext(ctx))
	switch {
	case failed == nil:
		return nil
	case errors.Is(context.Cause(ctx), errOwnerGone): // nothing was written
		return fmt.Errorf("%w: %w", ErrNotFound, context.Cause(ctx))
	case isDialError(failed):
		return fmt.Errorf("%w: node %s at %s: %v", ErrUnreachable, n.ID, n.URL, failed)
	default:
		return fmt.Errorf("cluster: forwarding to node %s at %s: %w", n.ID, n.URL, failed)
	}
}

// dropRepeatedVary removes from the owner's response the Vary values this
// node's own middleware (CORS: Vary: Origin) has already set on out, which
// ReverseProxy would otherwise add a second time.
func dropRepeatedVary(out, owner http.Header) {
	have := map[string]bool{}
	for _, v := range out.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			have[strings.ToLower(strings.TrimSpace(f))] = true
		}
	}
	if len(have) == 0 {
		return
	}
	var keep []string
	for _, v := range owner.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if f = strings.TrimSpace(f); f != "" && !have[strings.ToLower(f)] {
				keep = append(keep, f)
			}
		}
	}
	owner.Del("Vary")
	if len(keep) > 0 {
		owner.Set("Vary", strings.Join(keep, ", "))
	}
}

// isDialError reports whether err is a failure to connect (refused, no
// route, dial timeout): nothing reached the node.
func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
