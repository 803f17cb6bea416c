package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"time"
)

// Throttled writes log lines a client or backend can repeat at will (a
// refused initialize, a request on another principal's session) at a
// bounded rate: at most one line per Period per key; the lines withheld
// meanwhile are counted, and the next line of that key carries how many
// ("suppressed"). The keys remembered are bounded (maxWindows; beyond it
// the idle ones are forgotten, then new keys share one). Counting metrics
// are the caller's, per event. Safe for concurrent use; a nil *Throttled
// writes every line.
type Throttled struct {
	now func() time.Time

	mu    sync.Mutex
	lines map[string]*window
}

// NewThrottled returns a Throttled on the clock now (nil: time.Now).
func NewThrottled(now func() time.Time) *Throttled {
	if now == nil {
		now = time.Now
	}
	return &Throttled{now: now, lines: map[string]*window{}}
}

// Log writes msg with args at level on log, unless a line of key was
// written within Period: then it is withheld and counted. A line written
// after withheld ones has "suppressed" (their number) appended to args.
func (t *Throttled) Log(log *slog.Logger, level slog.Level, key, msg string, args ...any) {
	if t == nil {
		log.Log(context.Background(), level, msg, args...)
		return
	}
	n, ok := t.admit(key, t.now())
	if !ok {
		return
	}
	if n > 1 {
		args = append(args, "suppressed", n-1)
	}
	log.Log(context.Background(), level, msg, args...)
}

// admit reports whether key may log at now, and how many events the line
// stands for (this one and those withheld since the last line).
func (t *Throttled) admit(key string, now time.Time) (int, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	w := t.lines[key]
	if w == nil {
		if len(t.lines) >= maxWindows {
			t.forget(now)
		}
		if len(t.lines) >= maxWindows {
			key = "\x00overflow"
		}
		if w = t.lines[key]; w == nil {
			w = &window{}
			t.lines[key] = w
		}
	}
	if !w.last.IsZero() && now.Sub(w.last) < Period {
		w.withheld++
		return 0, false
	}
	n := w.withheld + 1
	w.last, w.withheld = now, 0
	return n, true
}

// forget drops the keys that withheld nothing for a Period (under mu).
func (t *Throttled) forget(now time.Time) {
	for k, w := range t.lines {
		if w.withheld == 0 && now.Sub(w.last) >= Period {
			delete(t.lines, k)
		}
	}
}
