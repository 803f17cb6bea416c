package status

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRateWindowCoversTheLastMinuteOnly(t *testing.T) {
	t.Parallel()
	w := RateWindow{Window: time.Minute}
	t0 := time.Date(2026, 12, 4, 12, 0, 0, 0, time.UTC)
	require.Equal(t, Rates{}, w.Rates(), "no samples")
	w.Add(t0, 0, 0)
	require.Equal(t, Rates{}, w.Rates(), "one sample spans nothing")
	for i := 1; i <= 24; i++ { // two minutes: 10 requests, 1 error every 5 s
		w.Add(t0.Add(time.Duration(i)*5*time.Second), float64(10*i), float64(i))
	}
	r := w.Rates()
	require.InDelta(t, 60, r.WindowSeconds, 0.001, "the window, not the two minutes")
	require.InDelta(t, 2.0, r.RequestsPerSecond, 0.001)
	require.InDelta(t, 0.2, r.ErrorsPerSecond, 0.001)
	require.LessOrEqual(t, len(w.samples), 13, "bounded: one sample per 5 s of the window")
	w.Add(t0.Add(10*time.Minute), 240, 24) // idle since: no requests in the window
	r = w.Rates()
	require.Zero(t, r.RequestsPerSecond)
}
