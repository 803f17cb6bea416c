package metatools

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Metric names of the tool search (Instrument).
const (
	SearchSecondsMetric = "vmcp_tool_search_seconds"
	BuildSecondsMetric  = "vmcp_tool_search_index_build_seconds"
)

// metrics are the tool search's histograms (nil fields: not instrumented).
type metrics struct {
	search prometheus.Histogram // one search_tools call's time in vmcp
	build  prometheus.Histogram // one index build's time
}

// fineBuckets resolve a p99 to within 25%: 20 µs to about 1.3 s.
var fineBuckets = prometheus.ExponentialBuckets(20e-6, 1.25, 50)

// Instrument registers, on reg, the histograms of the time vmcp spends in
// each search_tools call (ranking, authorization filter, embeddings blend
// and the result's JSON; not the HTTP round trip), SearchSecondsMetric,
// and in each index build, BuildSecondsMetric. Call it before Run.
func (t *Tools) Instrument(reg prometheus.Registerer) {
	t.m = metrics{
		search: prometheus.NewHistogram(prometheus.HistogramOpts{Name: SearchSecondsMetric, Buckets: fineBuckets,
			Help: "Time vmcp spends serving one search_tools call (ranking, filtering, embeddings blend, result JSON), seconds."}),
		build: prometheus.NewHistogram(prometheus.HistogramOpts{Name: BuildSecondsMetric, Buckets: fineBuckets,
			Help: "Time of one tool search index build after a catalogue change, seconds."}),
	}
	reg.MustRegister(t.m.search, t.m.build)
}

// observe records the time since start in h, if instrumented.
func observe(h prometheus.Histogram, start time.Time) {
	if h != nil {
		h.Observe(time.Since(start).Seconds())
	}
}
