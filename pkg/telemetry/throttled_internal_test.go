package telemetry

import (
	"fmt"
	"log/slog"
	"testing"
	"time"
)

// One line per Period per key, the next one carrying how many were
// withheld; other keys are not held back; the keys remembered stay
// bounded however many a flood brings.
func TestThrottledWritesOneLinePerPeriodPerKeyWithTheCountWithheld(t *testing.T) {
	t.Parallel()
	now := time.Unix(1000, 0)
	th := NewThrottled(func() time.Time { return now })
	h := &lines{}
	log := slog.New(h)
	for range 1000 {
		th.Log(log, slog.LevelWarn, "a", "refused")
	}
	th.Log(log, slog.LevelWarn, "b", "other")
	now = now.Add(Period)
	th.Log(log, slog.LevelWarn, "a", "refused", "k", "v")
	if len(h.recs) != 3 {
		t.Fatalf("%d lines, want 3", len(h.recs))
	}
	var suppressed int64 = -1
	h.recs[2].Attrs(func(a slog.Attr) bool {
		if a.Key == "suppressed" {
			suppressed = a.Value.Int64()
		}
		return true
	})
	if suppressed != 999 {
		t.Fatalf("suppressed %d, want 999", suppressed)
	}
	for i := range 10 * maxWindows {
		th.Log(log, slog.LevelWarn, fmt.Sprint("k", i), "many keys")
	}
	if n := len(th.lines); n > maxWindows+1 {
		t.Fatalf("%d keys remembered, want at most %d", n, maxWindows+1)
	}
}
