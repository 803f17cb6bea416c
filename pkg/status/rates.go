package status

import "time"

// RateWindow keeps samples of two monotonic counters (requests and
// errors) over a trailing window and answers their rates. It is not safe
// for concurrent use; its owner serialises Add and Rates.
type RateWindow struct {
	Window  time.Duration // how far back Rates looks (e.g. one minute)
	samples []rateSample  // oldest first, at most one older than Window
}

type rateSample struct {
	at             time.Time
	total, errored float64
}

// Add records the counters' values at t (t not before the last sample's).
func (w *RateWindow) Add(t time.Time, total, errored float64) {
	w.samples = append(w.samples, rateSample{t, total, errored})
	cut := 0
	for cut < len(w.samples)-1 && t.Sub(w.samples[cut+1].at) >= w.Window {
		cut++
	}
	w.samples = append(w.samples[:0], w.samples[cut:]...)
}

// Rates is requests and errors per second between the oldest sample in
// the window and the newest, and the span they cover (0: fewer than two).
func (w *RateWindow) Rates() Rates {
	n := len(w.samples)
	if n < 2 {
		return Rates{}
	}
	a, b := w.samples[0], w.samples[n-1]
	span := b.at.Sub(a.at).Seconds()
	if span <= 0 {
		return Rates{}
	}
	return Rates{RequestsPerSecond: (b.total - a.total) / span, ErrorsPerSecond: (b.errored - a.errored) / span, WindowSeconds: span}
}

// Rates are client request rates at the MCP endpoint over the last
// minute, from vmcp_requests_total (errors: outcome="error").
type Rates struct {
	RequestsPerSecond float64 `json:"requestsPerSecond"`
	ErrorsPerSecond   float64 `json:"errorsPerSecond"`
	WindowSeconds     float64 `json:"windowSeconds"` // the span the rates cover (about 60 s once vmcp ran a minute)
}
