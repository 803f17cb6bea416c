package vmcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"

	"github.com/vmcp/vmcp/pkg/cluster"
)

// startCluster builds this node's cluster membership from cfg.Cluster: on
// Redis when cluster.redis_url is set, else in memory (one node). Either
// way the Legacy path below runs the same code.
func (s *Server) startCluster(timing cluster.Timing) error {
	c := s.cfg.Cluster
	adv := c.AdvertiseURL
	if adv == "" && c.RedisURL != "" {
		var err error
		if adv, err = advertiseFromListen(s.cfg.Listen); err != nil {
			return err
		}
	}
	cl, err := cluster.New(cluster.Options{
		RedisURL:            c.RedisURL,
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

// advertiseFromListen is the advertise URL implied by a listen address with
// a concrete host and port.
func advertiseFromListen(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if ip := net.ParseIP(host); err != nil || host == "" || port == "0" || (ip != nil && ip.IsUnspecified()) {
		return "", fmt.Errorf("cluster.advertise_url is required: listen %q does not say how other nodes reach this one", listen)
	}
	return "http://" + net.JoinHostPort(host, port), nil
}

// onSession is the Legacy dispatcher's session hook: a new session is
// recorded as owned by this node (refused if that fails), an ended one is
// released.
func (s *Server) onSession(id string, start bool) error {
	if !start {
		s.cluster.SessionEnded(id)
		return nil
	}
	return s.cluster.SessionStarted(context.Background(), id)
}

// serveLegacy routes a Legacy request. A request without a session
// (initialize) or for a session living here is served by this node's SDK
// handler, the standalone GET stream under the cluster's stream lease. A
// request for a session living on another node is forwarded to its owner;
// a session that is gone gets the SDK's own 404. In cluster mode with Redis
// unreachable every Legacy request gets 503.
func (s *Server) serveLegacy(w http.ResponseWriter, r *http.Request) {
	if err := s.cluster.Check(); err != nil {
		cluster.WriteUnavailable(w, err)
		return
	}
	id := r.Header.Get("Mcp-Session-Id")
	switch {
	case id == "":
		s.legacy.ServeHTTP(w, r)
	case s.legacy.HasSession(id):
		if cluster.StandaloneGET(r) {
			s.cluster.ServeStream(w, r, id, s.legacy)
			return
		}
		s.legacy.ServeHTTP(w, r)
	default:
		s.forwardLegacy(w, r, id)
	}
}

// forwardLegacy forwards a request for session id to its owner node.
func (s *Server) forwardLegacy(w http.ResponseWriter, r *http.Request, id string) {
	err := s.cluster.ForwardSession(w, r, id)
	switch {
	case err == nil:
	case errors.Is(err, cluster.ErrNotFound), errors.Is(err, cluster.ErrLoop), errors.Is(err, cluster.ErrUnreachable):
		if errors.Is(err, cluster.ErrUnreachable) {
			s.log.Info("session owner unreachable; the session is lost", "session", id, "error", err)
		}
		s.legacy.ServeHTTP(w, r) // not here either: the SDK's 404, as for any unknown session
	case r.Context().Err() != nil: // the client left
	case errors.Is(err, cluster.ErrUnavailable):
		cluster.WriteUnavailable(w, err)
	default:
		s.log.Warn("forwarding to session owner failed", "session", id, "error", err)
		http.Error(w, "Bad Gateway: the node that owns this session did not answer", http.StatusBadGateway)
	}
}

// Cluster is this node's cluster membership: its node identity, session
// ownership and forwarding (Forward, Node) for dispatchers that resume
// work parked on another node.
func (s *Server) Cluster() *cluster.Cluster { return s.cluster }
