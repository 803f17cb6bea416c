package vmcp

import (
	"bufio"
	"context"
	"net"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/pkg/backends"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/tracing"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
	"go.opentelemetry.io/otel/trace"
)

// startTelemetry sets up tracing (the injected provider, else the one the
// config's telemetry.tracing asks for, owned and shut down by Close) and
// registers the gauges over the server's live state.
func (s *Server) startTelemetry(opts Options) error {
	tp := opts.TracerProvider
	s.tracingShutdown = func(context.Context) error { return nil }
	if tp == nil {
		var shutdown func(context.Context) error
		var err error
		if tp, shutdown, err = tracing.NewProvider(context.Background(), s.cfg.Telemetry.Tracing, Version); err != nil {
			return err
		}
		s.tracingShutdown = shutdown
		if t := s.cfg.Telemetry.Tracing; t.Enabled {
			s.log.Info("tracing on", "protocol", t.Protocol, "endpoint", t.Endpoint, "service", t.ServiceName)
		}
	}
	s.tracer = tp.Tracer(tracing.ScopeName, trace.WithInstrumentationVersion(Version))
	s.metrics.Observe(telemetry.Live{
		LegacySessions: s.SessionCount,
		GetStreams:     func() int { return int(s.getStreams.Load()) + s.cluster.OwnStreams() }, // in flight, and served on hijacked connections
		ListenStreams:  s.ModernListens,
		ParkedCalls:    s.ParkedCalls,
		Backends: func() []telemetry.BackendState {
			var out []telemetry.BackendState
			for _, st := range s.mgr.Status() {
				out = append(out, telemetry.BackendState{Name: st.Name, Up: st.State == backends.StateReady || st.State == backends.StatePerPrincipal, Tools: st.Tools})
			}
			return out
		},
	})
	return nil
}

// stopTracing flushes and shuts down the tracer provider vmcp created.
func (s *Server) stopTracing() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.tracingShutdown(ctx); err != nil {
		s.log.Warn("tracing: flushing spans at shutdown failed", "err", err)
	}
}

// observed wraps the MCP endpoint: every request gets its server span
// (tracing.Exchange, parent: the client's traceparent header, or its
// _meta where the go-sdk path reads it) and is counted and timed
// (vmcp_requests_total, vmcp_request_duration_seconds). The method comes
// from what serving the request reads anyway (Mcp-Method on Modern, the
// go-sdk middleware or the call core on Legacy); the body is not decoded
// again here.
func (s *Server) observed(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		revision, method, name := upstream.RevisionLegacy, "", ""
		if r.Method == http.MethodPost && wire.IsModern(r.Header.Get("Mcp-Protocol-Version")) {
			revision = upstream.RevisionModern
			if m := r.Header.Get("Mcp-Method"); telemetry.MethodLabel(m) == m {
				method = m
			}
			if n := r.Header.Get("Mcp-Name"); !strings.HasPrefix(n, "=?") { // not a base64-encoded value
				name = n
			}
		}
		x := s.exchanges.Begin(s.tracer, r, revision, method, name)
		rec, body := s.auditBegin(r, x, revision) // nil without an audit log (audit.go)
		sw := &statusWriter{ResponseWriter: w, sniff: rec != nil}
		if r.Method == http.MethodGet {
			s.getStreams.Add(1)
			sw.onHijack = func() { s.getStreams.Add(-1) } // the cluster serves it now (OwnStreams)
			defer func() {
				if !sw.hijacked {
					s.getStreams.Add(-1)
				}
			}()
		}
		next.ServeHTTP(sw, r)
		sid := r.Header.Get("Mcp-Session-Id")
		if sid == "" {
			sid = sw.Header().Get("Mcp-Session-Id") // initialize
		}
		var outcome tracing.Outcome
		defer func() { s.auditEnd(rec, body, x, sw, sid, outcome) }()
		x.End(sw.code(), sid, func(out tracing.Outcome) {
			outcome = out
			label, outcome := telemetry.MethodLabel(out.Method), "ok"
			if label == "" {
				label = r.Method // a GET stream, a DELETE, a response or an unrecognised POST
			}
			switch {
			case out.Cancelled:
				outcome = "cancelled"
			case out.Failed:
				outcome = "error"
			}
			s.metrics.Requests.WithLabelValues(label, revision, outcome).Inc()
			s.metrics.RequestLatency.WithLabelValues(label, revision).Observe(time.Since(x.Started()).Seconds())
		})
	})
}

// observe is receiving middleware on the Legacy go-sdk path: it tells the
// request's Exchange the method, target and _meta the SDK decoded, whether
// the handler failed, and (a request) when it returned: the go-sdk ends
// the HTTP request of a client that left without waiting for it.
func (s *Server) observe(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		var x *tracing.Exchange
		if extra := req.GetExtra(); extra != nil {
			x = s.exchanges.Lookup(extra.Header)
		}
		if x == nil {
			return next(ctx, method, req)
		}
		var meta map[string]any
		name := ""
		if p := req.GetParams(); p != nil && !reflect.ValueOf(p).IsNil() { // params may be a typed nil (none sent)
			meta, name = p.GetMeta(), target(p)
		}
		x.Observe(method, name, meta)
		if !strings.HasPrefix(method, "notifications/") {
			defer x.Handle()()
		}
		res, err := next(ctx, method, req)
		if err != nil {
			x.Fail(tracing.ErrorType(err))
		}
		return res, err
	}
}

// target is the tool or prompt name or resource URI a request names (p
// is not nil).
func target(p mcp.Params) string {
	switch p := p.(type) {
	case *mcp.CallToolParamsRaw:
		return p.Name
	case *mcp.GetPromptParams:
		return p.Name
	case *mcp.ReadResourceParams:
		return p.URI
	case *mcp.SubscribeParams:
		return p.URI
	case *mcp.UnsubscribeParams:
		return p.URI
	}
	return ""
}

// statusWriter records the status a handler writes; it flushes and
// unwraps (http.ResponseController) like the writer it wraps.
type statusWriter struct {
	http.ResponseWriter
	status  int
	written int64 // body bytes written
	sniff   bool  // read the JSON-RPC error code answered (audit log)
	errCode int64 // the first error response's code (0: none)

	onHijack func() // called once when the connection is taken over
	hijacked bool
}

// Hijack takes the connection over (a GET stream the node then serves
// itself) and calls onHijack once it has.
func (w *statusWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	conn, rw, err := http.NewResponseController(w.ResponseWriter).Hijack()
	if err == nil && !w.hijacked {
		w.hijacked = true
		if w.onHijack != nil {
			w.onHijack()
		}
	}
	return conn, rw, err
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 && code >= 200 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	n, err := w.ResponseWriter.Write(b)
	w.written += int64(n)
	if w.sniff && w.errCode == 0 {
		w.errCode, _ = wire.ErrorCode(b)
	}
	return n, err
}

// Flush flushes the underlying writer if it can.
func (w *statusWriter) Flush() { _ = http.NewResponseController(w.ResponseWriter).Flush() }

// Unwrap gives http.ResponseController the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// code is the status written (200 when the handler wrote nothing).
func (w *statusWriter) code() int {
	if w.status == 0 {
		return http.StatusOK
	}
	return w.status
}
