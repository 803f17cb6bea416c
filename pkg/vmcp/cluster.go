package vmcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/vmcp/vmcp/pkg/audit"
	"github.com/vmcp/vmcp/pkg/cluster"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/pkg/identity"
	"github.com/vmcp/vmcp/pkg/telemetry"
)

// startCluster builds this node's cluster membership from cfg.Cluster: on
// Redis when cluster.redis_url, redis_cluster or redis_sentinel is set,
// else in memory (one node). Either way the Legacy path below runs the
// same code. dial, if set, opens the connections to Redis (tests).
func (s *Server) startCluster(timing cluster.Timing, dial cluster.Dialer) error {
	c := s.cfg.Cluster
	adv := c.AdvertiseURL
	if adv == "" && c.UsesRedis() {
		var err error
		if adv, err = config.AdvertiseFromListen(s.cfg.Listen); err != nil {
			return err
		}
	}
	r, err := redisOf(c, dial)
	if err != nil {
		return err
	}
	cl, err := cluster.New(cluster.Options{
		Redis:               r,
		KeyPrefix:           c.KeyPrefix,
		NodeID:              c.NodeID,
		AdvertiseURL:        adv,
		MaxEventsPerSession: c.MaxEventsPerSession,
		Timing:              timing,
		Logger:              s.log,
		EventsNotStored:     s.metrics.EventsNotStored,
	})
	if err != nil {
		return err
	}
	s.cluster = cl
	return nil
}

// redisOf is the cluster's Redis as configured (the CA file is read here,
// once, at start).
func redisOf(c config.Cluster, dial cluster.Dialer) (cluster.Redis, error) {
	r := cluster.Redis{URL: c.RedisURL, Cluster: c.RedisCluster, Username: c.RedisUsername,
		Password: c.RedisPassword, TLS: c.RedisTLS, Dialer: dial}
	if s := c.RedisSentinel; s != nil {
		r.Sentinel = &cluster.Sentinel{Master: s.Master, Addrs: s.Addrs, Username: s.Username, Password: s.Password}
	}
	if f := c.RedisTLSCAFile; f != "" {
		pool, err := config.LoadCAPool(f)
		if err != nil {
			return r, fmt.Errorf("cluster.redis_tls_ca_file: %w", err)
		}
		r.TLSRoots = pool
	}
	return r, nil
}

// onSession is the Legacy dispatcher's session hook: a new session is
// recorded as owned by this node and by the principal whose initialize
// created it (refused if that fails, or beyond
// sessions.max_per_principal), an ended one is released.
func (s *Server) onSession(ctx context.Context, id string, start bool) error {
	if !start {
		s.cluster.SessionEnded(id)
		return nil
	}
	return s.cluster.SessionStarted(context.Background(), id, identity.From(ctx).Key(), s.cfg.Sessions.MaxPerPrincipal)
}

// serveLegacy routes a Legacy request. A request without a session
// (initialize) or for a session living here is served by this node's SDK
// handler, the standalone GET stream through Cluster.ServeStream (one live
// stream per session, kept by this node: the owner). A
// request for a session living on another node is forwarded to its owner;
// a session that is gone gets 404 (the SDK's answer). A session belongs to the
// principal that initialized it: another principal's request (POST, GET,
// DELETE) gets 403 before anything is served or forwarded. In
// cluster mode with Redis unreachable every Legacy request gets 503.
func (s *Server) serveLegacy(w http.ResponseWriter, r *http.Request) {
	if err := s.cluster.Check(); err != nil {
		cluster.WriteUnavailable(w, err)
		return
	}
	id := r.Header.Get("Mcp-Session-Id")
	principal := identity.From(r.Context())
	switch {
	case id == "":
		if !s.legacy.Refuse(w, r) { // 400 + -32700/-32600 as JSON-RPC bodies
			s.legacy.ServeHTTP(w, r)
		}
	case s.legacy.HasSession(id):
		if owner, _ := s.cluster.SessionPrincipal(id); owner != principal.Key() {
			s.forbidden(w, r, id, principal)
			return
		}
		if s.legacy.Refuse(w, r) { // only after the owner check: a refusal may end the session's pending request
			return
		}
		if cluster.StandaloneGET(r) {
			s.cluster.ServeStream(w, r, id, s.legacy)
			return
		}
		s.legacy.ServeHTTP(w, r)
	default:
		s.forwardLegacy(w, r, id, principal)
	}
}

// forbidden answers a request for session id by a principal that did not
// create it: 403, counted, logged (at most once a second, with the
// number withheld), and audited as denied by the
// session owner check; nothing else happens.
func (s *Server) forbidden(w http.ResponseWriter, r *http.Request, id string, p identity.Principal) {
	s.metrics.SessionForbidden.WithLabelValues(r.Method).Inc()
	s.exchanges.Lookup(r.Header).Decide(audit.Decision{Denied: true, By: audit.BySessionOwner})
	s.metrics.Throttled.Log(s.log, slog.LevelInfo, "session_forbidden", "session request by another principal refused",
		"session", telemetry.SessionTag(id), "principal", p.String(), "method", r.Method) // a client can repeat it at will
	http.Error(w, "Forbidden: this session belongs to another principal", http.StatusForbidden)
}

// forwardLegacy forwards a request for session id to its owner node, if
// principal p created the session.
func (s *Server) forwardLegacy(w http.ResponseWriter, r *http.Request, id string, p identity.Principal) {
	s.exchanges.Lookup(r.Header).Forward(r.Header) // the owner's span is this one's child
	err := s.cluster.ForwardSession(w, r, id, p.Key())
	switch {
	case err == nil:
	case errors.Is(err, cluster.ErrForbidden):
		s.forbidden(w, r, id, p)
	case errors.Is(err, cluster.ErrNotFound), errors.Is(err, cluster.ErrLoop), errors.Is(err, cluster.ErrUnreachable):
		if errors.Is(err, cluster.ErrUnreachable) {
			s.log.Info("session owner unreachable; the session is lost", "session", telemetry.SessionTag(id), "error", err)
		}
		s.legacy.ServeHTTP(w, r) // not here either: 404, as for any unknown session
	case r.Context().Err() != nil: // the client left
	case errors.Is(err, cluster.ErrUnavailable):
		cluster.WriteUnavailable(w, err)
	default:
		s.log.Warn("forwarding to session owner failed", "session", telemetry.SessionTag(id), "error", err)
		http.Error(w, "Bad Gateway: the node that owns this session did not answer", http.StatusBadGateway)
	}
}

// Cluster is this node's cluster membership: its node identity, session
// ownership and forwarding (Forward, Node) for dispatchers that resume
// work parked on another node.
func (s *Server) Cluster() *cluster.Cluster { return s.cluster }
