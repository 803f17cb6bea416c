package telemetry

import (
	"context"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
)

// lines is a slog handler that keeps every record.
type lines struct {
	mu   sync.Mutex
	recs []slog.Record
}

func (l *lines) Enabled(context.Context, slog.Level) bool { return true }
func (l *lines) Handle(_ context.Context, r slog.Record) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.recs = append(l.recs, r)
	return nil
}
func (l *lines) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *lines) WithGroup(string) slog.Handler      { return l }

// TestUnownedProgressFloodLogsEveryMessage pins issue 28's log
// amplification: 100,000 progress notifications no call owns wrote
// 100,022 WARN lines. Now each is counted, one line per second per
// backend and reason is written, and the next line carries the count.
func TestUnownedProgressFloodLogsEveryMessage(t *testing.T) {
	t.Parallel()
	m := New()
	now := time.Unix(1000, 0)
	m.Undelivered.now = func() time.Time { return now }
	h := &lines{}
	log := slog.New(h)
	for range 100_000 {
		m.Undelivered.Report(log, "notifications/progress", "b", "unknown_token", nil)
	}
	m.Undelivered.Report(log, "notifications/progress", "other", "unknown_token", nil)
	now = now.Add(Period)
	m.Undelivered.Report(log, "notifications/progress", "b", "unknown_token", nil)
	if len(h.recs) != 3 {
		t.Fatalf("%d log lines, want 3", len(h.recs))
	}
	var count int64
	h.recs[2].Attrs(func(a slog.Attr) bool {
		if a.Key == "count" {
			count = a.Value.Int64()
		}
		return true
	})
	if count != 100_000 { // 99,999 withheld + this one
		t.Fatalf("last line's count %d, want 100000", count)
	}
	if got := testutil.ToFloat64(m.ProgressDropped.WithLabelValues("b", "unknown_token")); got != 100_001 {
		t.Fatalf("counted %v", got)
	}
}
