package telemetry

import (
	"log/slog"
	"time"
)

// Undelivered reports the messages vmcp cannot deliver (a backend's
// progress no call sent, a log after its call ended, ...): every one is
// counted (vmcp_undeliverable_messages_total{method}, and dropped
// progress in vmcp_progress_dropped_total{backend,reason}), but logged at
// most once per Period per backend and reason, with the number since the
// last line, so no backend can fill the operator's disk with WARN lines.
// One per server (Metrics.Undelivered); safe for concurrent use.
type Undelivered struct {
	m   *Metrics
	now func() time.Time // time.Now; tests inject a clock
	t   *Throttled       // the windows per backend and key (its clock unused: now is)
}

// Period is the least time between two log lines of one backend and
// reason.
const Period = time.Second

// maxWindows bounds the keys remembered; beyond it, keys share one.
const maxWindows = 1024

type window struct {
	last     time.Time
	withheld int // messages since the last line
}

// Report counts one undeliverable message of method from backend (reason:
// the progress drop reason, "" for none; the log key is reason, else
// method) and logs it on log unless a line for the same backend and
// reason was written within Period. attrs are added to the line.
func (u *Undelivered) Report(log *slog.Logger, method, backend, reason string, err error, attrs ...any) {
	u.m.Undeliverable.WithLabelValues(method).Inc()
	if reason != "" {
		u.m.ProgressDropped.WithLabelValues(backend, reason).Inc()
	}
	key := reason
	if key == "" {
		key = method
	}
	n, ok := u.admit(backend + "\x00" + key)
	if !ok {
		return
	}
	args := append([]any{"method", method, "backend", backend, "error", err, "count", n}, attrs...)
	log.Warn("message not delivered", args...)
}

// admit reports whether key may log now, and how many messages the line
// stands for (this one and those withheld since the last line).
func (u *Undelivered) admit(key string) (int, bool) { return u.t.admit(key, u.now()) }
