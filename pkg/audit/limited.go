package audit

import (
	"log/slog"
	"sync"
	"time"
)

// limited logs one warning per second at most, with the number of events
// since the last one it logged (and the last error).
type limited struct {
	now  func() time.Time
	log  *slog.Logger
	msg  string
	mu   sync.Mutex
	last time.Time // when it last logged
	n    int64     // events not yet logged
}

func newLimited(now func() time.Time, log *slog.Logger, msg string) *limited {
	if now == nil {
		now = time.Now
	}
	return &limited{now: now, log: log, msg: msg}
}

// add counts n events (err: the latest one's error, if any) and logs them
// when a second has passed since the last log.
func (l *limited) add(n int64, err error) {
	l.mu.Lock()
	l.n += n
	t := l.now()
	if !l.last.IsZero() && t.Sub(l.last) < time.Second {
		l.mu.Unlock()
		return
	}
	count := l.n
	l.n, l.last = 0, t
	l.mu.Unlock()
	if err != nil {
		l.log.Warn(l.msg, "count", count, "error", err)
		return
	}
	l.log.Warn(l.msg, "count", count)
}
