package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/vmcp/vmcp/pkg/telemetry"
	"github.com/vmcp/vmcp/pkg/wire"
)

// The standalone GET stream of a Legacy streamable-HTTP backend session is
// optional: the server MAY offer it, and a 405 says it does not. The go-sdk
// client (v1.8.0) makes it part of the connection instead: Connect waits
// for the GET's response headers (forever on a backend that accepts the GET
// and never flushes), and a stream that ends more often than MaxRetries
// without new event ids, or a reconnect answered with 405, fails the whole
// connection, so the backend was marked down and its tools removed.
//
// steadyGET sits under the go-sdk client, on the backend's HTTP client. It
// answers the client's GET at once with an SSE stream that lasts until the
// connection closes and, behind it, keeps the backend's GET stream open:
// whole events are copied through, a stream that ends is reopened with
// backoff (with Last-Event-ID when the backend gave event ids), and after
// Steady.Attempts failed attempts in a row, or at once on 405 (no
// stream offered) or 404 (session gone), vmcp stops reopening it and the
// stream stays silent (a 404 tells the session's owner, WithGone). So a
// GET stream never changes a backend's state: only failing POSTs and
// health probes do. On the control connection,
// every opening of the stream requests a catalogue refresh, covering
// list_changed notifications the backend sent while it was closed, or,
// for the first, between initialize (and vmcp's first listing) and the
// stream's opening, which the backend drops as well.

// controlKey marks the control connection's context; the go-sdk keeps
// context values on the connection's own (detached) context, so its GET
// requests carry the mark.
type controlKey struct{}

// WithControl marks ctx as a control connection's: a reopened GET stream
// of a connection made in it calls Steady.Refresh.
func WithControl(ctx context.Context) context.Context {
	return context.WithValue(ctx, controlKey{}, true)
}

// goneKey marks a connection's context with what to do when the backend
// forgot its session.
type goneKey struct{}

// WithGone marks ctx so that a GET stream of a connection made in it calls
// gone when the backend, having served the stream, answers its reopening
// 404 (it forgot the session; a first 404 is a GET never offered):
// nothing else on a session that sends no requests would notice.
func WithGone(ctx context.Context, gone func()) context.Context {
	return context.WithValue(ctx, goneKey{}, gone)
}

// Steady is what a backend's steady GET streams need of it: its name (the
// metrics' label), log and metrics, the reopening's backoff (doubling from
// MinBackoff up to MaxBackoff), how long an event-less stream must stay
// open to count as a success (Stable), the failed attempts in a row that
// end the reopening (Attempts), and Refresh, which requests a catalogue
// refresh after a control connection's stream was reopened.
type Steady struct {
	Name                   string
	Log                    *slog.Logger
	Metrics                *telemetry.Metrics
	MinBackoff, MaxBackoff time.Duration
	Stable                 time.Duration
	Attempts               int
	Refresh                func()
}

// errReaderGone: the go-sdk client closed its end of the stream.
var errReaderGone = errors.New("GET stream closed by the client")

// SteadyGET wraps base so GET requests get a steady stream (see above).
func SteadyGET(base http.RoundTripper, s Steady) http.RoundTripper {
	return &steadyTransport{base: base, s: s}
}

type steadyTransport struct {
	base http.RoundTripper
	s    Steady
}

func (t *steadyTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Method != http.MethodGet {
		return t.base.RoundTrip(req)
	}
	pr, pw := io.Pipe()
	body := &steadyBody{PipeReader: pr, closed: make(chan struct{})}
	ctx := req.Context()
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(ctx.Err()) })
	go func() { // ends with the connection's context or the client's Close
		defer stop()
		t.keep(req, pw, body.closed)
		pw.CloseWithError(errReaderGone)
	}()
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header:        http.Header{"Content-Type": {wire.MediaSSE}},
		Body:          body,
		ContentLength: -1,
		Request:       req,
	}, nil
}

// steadyBody is the go-sdk client's end of a steady stream; Close tells the
// goroutine behind it to stop.
type steadyBody struct {
	*io.PipeReader
	once   sync.Once
	closed chan struct{}
}

func (b *steadyBody) Close() error {
	b.once.Do(func() { close(b.closed) })
	return b.PipeReader.Close()
}

// keep serves the backend's GET stream into w until ctx ends or closed is
// closed; when it stops reopening, it waits for one of those.
func (t *steadyTransport) keep(req *http.Request, w io.Writer, closed <-chan struct{}) {
	s, ctx := t.s, req.Context()
	backoff, failures := s.MinBackoff, 0
	control := ctx.Value(controlKey{}) != nil
	var lastID string
	served := false // a stream was opened: a later 404 is a forgotten session, not a GET never offered
	for {
		opened := time.Now()
		events, status, err := t.once(req, &lastID, w, func() {
			if control { // cover what the gap missed; the first open too: it
				// follows the go-sdk's GET (answered at once) and vmcp's
				// first listing, and the backend drops what it sends before
				s.Refresh()
			}
		})
		if ctx.Err() != nil || errors.Is(err, errReaderGone) {
			return
		}
		served = served || status == http.StatusOK
		if status == http.StatusMethodNotAllowed || status == http.StatusNotFound {
			t.abandon(ctx, status, served)
			wait(ctx, closed, -1)
			return
		}
		if status == http.StatusOK && (events > 0 || time.Since(opened) >= s.Stable) {
			backoff, failures = s.MinBackoff, 0
		} else {
			failures++
		}
		if failures >= s.Attempts {
			s.Log.Warn("backend GET stream failed too often; not reopened", "attempts", failures, "error", err)
			s.Metrics.GetStreamAbandoned.WithLabelValues(s.Name).Inc()
			wait(ctx, closed, -1)
			return
		}
		s.Log.Debug("backend GET stream ended; reopening", "backoff", backoff, "error", err)
		s.Metrics.GetStreamReconnects.WithLabelValues(s.Name).Inc()
		if !wait(ctx, closed, backoff) {
			return
		}
		if failures > 0 {
			backoff = min(backoff*2, s.MaxBackoff)
		}
	}
}

// abandon stops reopening a GET stream the backend answered status (405
// or 404); a 404 after a served stream tells the session's owner
// (WithGone): the backend forgot the session. The owner is told before
// the line is logged, so the log line marks a finished abandonment.
func (t *steadyTransport) abandon(ctx context.Context, status int, served bool) {
	if gone, _ := ctx.Value(goneKey{}).(func()); gone != nil && status == http.StatusNotFound && served {
		gone()
	}
	t.s.Metrics.GetStreamAbandoned.WithLabelValues(t.s.Name).Inc()
	t.s.Log.Debug("backend GET stream not offered; not reopened", "status", status)
}

// once opens the backend's GET stream once and copies its whole events to
// w until it ends, returning the number of events, the HTTP status (0 if
// none) and why it ended. *lastID tracks the last event id; opened runs
// once the stream is open.
func (t *steadyTransport) once(req *http.Request, lastID *string, w io.Writer, opened func()) (int, int, error) {
	r := req.Clone(req.Context())
	if *lastID != "" {
		r.Header.Set("Last-Event-ID", *lastID)
	}
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return 0, 0, err
	}
	defer resp.Body.Close()
	ct := wire.MediaType(resp.Header.Get("Content-Type"))
	if resp.StatusCode != http.StatusOK || ct != wire.MediaSSE {
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
		return 0, resp.StatusCode, fmt.Errorf("GET stream: HTTP %d (%s)", resp.StatusCode, ct)
	}
	opened()
	return copyEvents(resp.Body, w, lastID)
}

// copyEvents copies whole SSE events from r to w (read with
// wire.EventReader, written again with wire.AppendEvent; comments
// dropped); an event cut short by the stream's end is not copied, so a
// reopened stream never splices half an event. An event
// over wire.MaxEvent ends the stream.
func copyEvents(r io.Reader, w io.Writer, lastID *string) (int, int, error) {
	er := wire.NewEventReader(r)
	defer er.Release()
	var buf []byte
	for n := 0; ; n++ {
		ev, err := er.Event()
		if err == nil && er.Cut() { // half an event: the reopened stream resends it
			err = io.ErrUnexpectedEOF
		}
		if err != nil {
			return n, http.StatusOK, err
		}
		buf = wire.AppendEvent(buf[:0], ev)
		if _, err := w.Write(buf); err != nil {
			return n, http.StatusOK, errReaderGone
		}
		if ev.ID != "" {
			*lastID = ev.ID
		}
	}
}

// wait waits d (forever if d < 0) unless ctx ends or closed is closed; it
// reports whether d elapsed.
func wait(ctx context.Context, closed <-chan struct{}, d time.Duration) bool {
	var tc <-chan time.Time
	if d >= 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		tc = t.C
	}
	select {
	case <-ctx.Done():
		return false
	case <-closed:
		return false
	case <-tc:
		return true
	}
}
