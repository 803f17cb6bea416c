package vmcp

import (
	"context"
	"net/http"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/vmcp/vmcp/pkg/audit"
	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/upstream"
	"github.com/vmcp/vmcp/pkg/wire"
)

// Edge stages an MCP endpoint request passes, in order (routes): the
// Host guard, the Origin check, the body read. A request refused before
// the last is refused at the edge, before observed (and its audit record)
// runs.
const (
	stageHost int32 = iota + 1
	stageOrigin
	stageBody
)

// edgeKey is the context key of a request's *atomic.Int32 stage.
type edgeKey struct{}

// passed marks, for auditEdge, that a request got past stage (h is what
// comes after it).
func passed(stage int32, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if at, ok := r.Context().Value(edgeKey{}).(*atomic.Int32); ok {
			at.Store(max(at.Load(), stage))
		}
		h.ServeHTTP(w, r)
	})
}

// auditEdge wraps the main listener's handler: with an audit log, an MCP
// endpoint request the edge refuses (Host 403, Origin 403, body 413, 408 or
// 400) is recorded as denied by that guard, its outcome the HTTP status,
// from what its headers tell (never a header's value but the traceparent
// and the Modern Mcp-Method). Without an audit log, h itself.
func (s *Server) auditEdge(h http.Handler) http.Handler {
	if s.audit == nil {
		return h
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != s.cfg.Path {
			h.ServeHTTP(w, r)
			return
		}
		start, at := time.Now(), new(atomic.Int32)
		sw := &statusWriter{ResponseWriter: w}
		h.ServeHTTP(sw, r.WithContext(context.WithValue(r.Context(), edgeKey{}, at)))
		if stage := at.Load(); stage < stageBody && sw.code() >= http.StatusBadRequest {
			s.audit.Write(s.edgeRecord(r, start, sw, refusedBy(stage, sw.code())))
		}
	})
}

// refusedBy names the guard that refused a request with status after it
// passed stage.
func refusedBy(stage int32, status int) string {
	switch {
	case stage < stageHost:
		return audit.ByHost
	case stage < stageOrigin:
		return audit.ByOrigin
	case status == http.StatusRequestEntityTooLarge:
		return audit.ByBodySize
	case status == http.StatusRequestTimeout:
		return audit.ByReadTimeout
	}
	return audit.ByBodyRead
}

// edgeRecord is the audit record of r, refused at the edge by guard.
func (s *Server) edgeRecord(r *http.Request, start time.Time, sw *statusWriter, guard string) *audit.Record {
	rec := &audit.Record{Time: start, Node: s.cluster.Self().ID, Revision: upstream.RevisionLegacy, HTTP: r.Method,
		Decision: audit.Decision{Denied: true, By: guard}, Outcome: audit.Outcome{Code: int64(sw.code())},
		Status: sw.code(), Duration: time.Since(start), BytesOut: sw.written}
	if r.Method == http.MethodPost && wire.IsModern(r.Header.Get("Mcp-Protocol-Version")) {
		rec.Revision = upstream.RevisionModern
		if m := r.Header.Get("Mcp-Method"); m != "" && telemetry.MethodLabel(m) == m {
			rec.Method = m
		}
	}
	sc := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(r.Context(), propagation.HeaderCarrier(r.Header)))
	if sc.IsValid() {
		rec.Traceparent = "00-" + sc.TraceID().String() + "-" + sc.SpanID().String() + "-" + sc.TraceFlags().String()
	}
	return rec
}
