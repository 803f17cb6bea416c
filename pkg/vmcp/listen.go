package vmcp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/vmcp/vmcp/pkg/edge"
)

// HTTPServer is a new http.Server for the main listener: Handler behind the
// configured http.read_header_timeout and http.idle_timeout, with no write
// timeout (edge.NewServer). Serve uses it; embedders and tests serving
// Handler themselves (httptest) should too.
func (s *Server) HTTPServer() *http.Server { return s.newHTTPServer(s.handler) }

func (s *Server) newHTTPServer(h http.Handler) *http.Server {
	return edge.NewServer(h, edge.Timeouts{ReadHeader: s.cfg.HTTP.ReadHeaderTimeout.D(), Idle: s.cfg.HTTP.IdleTimeout.D()}, s.log)
}

// ListenAndServe serves on addr until ctx ends, then shuts down gracefully:
// stop accepting, let in-flight requests finish within grace, close
// sessions and backends.
func (s *Server) ListenAndServe(ctx context.Context, addr string, grace time.Duration) error {
	lis, err := net.Listen("tcp", addr)
	if err != nil {
		_ = s.Close()
		return err
	}
	return s.Serve(ctx, lis, grace)
}

// Serve is ListenAndServe on an open listener (bind before New, so a busy
// port fails before any backend process starts). With http.metrics_listen
// it also serves /metrics there (Options.MetricsListener, or bound here).
func (s *Server) Serve(ctx context.Context, lis net.Listener, grace time.Duration) error {
	srv := s.HTTPServer()
	servers := []*http.Server{srv}
	errc := make(chan error, 2)
	go func() { errc <- srv.Serve(lis) }()
	if m := s.cfg.HTTP.MetricsListen; m != "" {
		ml := s.metricsLis
		if ml == nil {
			var err error
			if ml, err = net.Listen("tcp", m); err != nil {
				_ = srv.Close()
				_ = s.Close()
				return fmt.Errorf("http.metrics_listen: %w", err)
			}
		}
		msrv := s.newHTTPServer(s.metricsRoutes())
		servers = append(servers, msrv)
		go func() { errc <- msrv.Serve(ml) }()
		s.log.Info("vmcp serving /metrics", "addr", ml.Addr().String())
	} else if s.metricsLis != nil {
		_ = s.metricsLis.Close() // not configured: nothing serves it
	}
	s.log.Info("vmcp serving", "addr", lis.Addr().String(), "path", s.cfg.Path)
	select {
	case err := <-errc:
		for _, x := range servers {
			_ = x.Close()
		}
		_ = s.Close()
		return err
	case <-ctx.Done():
	}
	return s.shutdown(servers, grace)
}

// shutdown stops servers[0] (the main listener) gracefully within grace
// and the others (short requests only) with it.
func (s *Server) shutdown(servers []*http.Server, grace time.Duration) error {
	s.log.Info("vmcp shutting down", "grace", grace)
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	for _, x := range servers[1:] {
		if x.Shutdown(sctx) != nil {
			_ = x.Close()
		}
	}
	srv := servers[0]
	s.modern.EndStreams() // listen streams end with their result; calls go on
	stop := context.AfterFunc(sctx, s.legacy.Abort)
	defer stop()
	err := srv.Shutdown(sctx) // GET streams never go idle: this waits for grace
	if err != nil {
		s.legacy.Abort() // grace elapsed: cut in-flight backend calls
		_ = srv.Close()
	}
	_ = s.Close()
	if errors.Is(err, context.DeadlineExceeded) {
		s.log.Warn("shutdown grace elapsed; remaining requests cut", "grace", grace)
		return nil
	}
	return err
}
