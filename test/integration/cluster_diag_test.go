package integration

import (
	"fmt"
	"log"
	"log/slog"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/go-logr/logr"
)

// clDiag is one cluster test's diagnostics: its nodes' logs (debug level),
// their HTTP servers' and the balancer's error logs, and a line per
// request the balancer routed (status, the first bytes of the response).
// They are printed only if the test fails, so that a failure seen once
// under load (a stream cut short, a 404 for a session just created)
// explains itself. The newest clDiagMax bytes are kept.
type clDiag struct {
	mu  sync.Mutex
	buf []byte
}

// clDiagMax bounds what one test's diagnostics keep.
const clDiagMax = 512 << 10

// clDiags maps a running test to its diagnostics.
var clDiags sync.Map

// clDiagFor returns t's diagnostics, printed when t ends failed.
func clDiagFor(t testing.TB) *clDiag {
	d, loaded := clDiags.LoadOrStore(t, &clDiag{})
	if !loaded {
		t.Cleanup(func() {
			clDiags.Delete(t)
			if t.Failed() {
				t.Logf("cluster diagnostics (nodes' logs, balancer hops):\n%s", d.(*clDiag).String())
			}
		})
	}
	return d.(*clDiag)
}

func (d *clDiag) Write(p []byte) (int, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.buf = append(d.buf, p...)
	if over := len(d.buf) - clDiagMax; over > 0 {
		d.buf = append(d.buf[:0], d.buf[over:]...)
	}
	return len(p), nil
}

func (d *clDiag) String() string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return string(d.buf)
}

// logger is a node's vmcp logger, at debug level, its lines marked node=name.
func (d *clDiag) logger(name string) logr.Logger {
	h := slog.NewTextHandler(d, &slog.HandlerOptions{Level: slog.LevelDebug})
	return logr.FromSlogHandler(h.WithAttrs([]slog.Attr{slog.String("node", name)}))
}

// errorLog is an http.Server's or ReverseProxy's error log, its lines
// prefixed with who wrote them.
func (d *clDiag) errorLog(who string) *log.Logger {
	return log.New(d, who+": ", log.Lmicroseconds)
}

// hop records one request the balancer routed, once it has ended.
func (d *clDiag) hop(h clHop, start time.Time, rec *clRecorder) {
	fmt.Fprintf(d, "%s balancer %s → %s session=%q last-event-id=%q: %d after %s, %d bytes: %q\n",
		start.Format("15:04:05.000000"), h.method, h.node, h.session, h.lastEventID,
		rec.status, time.Since(start).Round(time.Microsecond), rec.n, rec.head)
}

// clRecorder passes a response through, noting its status, its size and
// its first clHeadMax bytes.
type clRecorder struct {
	http.ResponseWriter
	status int
	n      int
	head   []byte
}

// clHeadMax is how much of each response a hop line shows.
const clHeadMax = 300

func (r *clRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *clRecorder) Write(p []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if room := clHeadMax - len(r.head); room > 0 {
		r.head = append(r.head, p[:min(room, len(p))]...)
	}
	n, err := r.ResponseWriter.Write(p)
	r.n += n
	return n, err
}

// Unwrap gives http.ResponseController (the proxy's flushes) the writer.
func (r *clRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
