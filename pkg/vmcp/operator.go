package vmcp

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/vmcp/vmcp/pkg/dispatch/legacy"
	"github.com/vmcp/vmcp/pkg/status"
)

// Operator page limits.
const (
	statusSessions  = 100             // sessions listed on /status (newest first)
	sessionIDPrefix = 8               // characters of a session id /status shows
	rateSampleEvery = 5 * time.Second // how often the request counters are sampled
)

// operator is what /status tells beyond live state: when this process
// started, the config file it serves (Watch), and the request rates of
// the last minute, sampled from vmcp_requests_total (the counter /metrics
// serves) by one goroutine that ends with close.
type operator struct {
	started  time.Time
	config   atomic.Pointer[string]
	requests *prometheus.CounterVec
	stop     chan struct{}
	done     chan struct{}

	mu    sync.Mutex
	rates status.RateWindow
}

func newOperator(requests *prometheus.CounterVec) *operator {
	o := &operator{started: time.Now().UTC(), requests: requests, stop: make(chan struct{}), done: make(chan struct{}),
		rates: status.RateWindow{Window: time.Minute}}
	o.sample(o.started)
	go o.run()
	return o
}

func (o *operator) run() {
	defer close(o.done)
	t := time.NewTicker(rateSampleEvery)
	defer t.Stop()
	for {
		select {
		case <-o.stop:
			return
		case now := <-t.C:
			o.sample(now)
		}
	}
}

// close stops the sampler and waits for it.
func (o *operator) close() {
	select {
	case <-o.stop:
	default:
		close(o.stop)
	}
	<-o.done
}

// sample adds the counters' values at now to the window.
func (o *operator) sample(now time.Time) {
	total, errored := counterSums(o.requests)
	o.mu.Lock()
	o.rates.Add(now, total, errored)
	o.mu.Unlock()
}

// currentRates samples now and returns the window's rates.
func (o *operator) currentRates(now time.Time) status.Rates {
	o.sample(now)
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.rates.Rates()
}

// counterSums adds up every series of v, and those labelled
// outcome="error".
func counterSums(v *prometheus.CounterVec) (total, errored float64) {
	ch := make(chan prometheus.Metric, 64)
	go func() { v.Collect(ch); close(ch) }()
	for m := range ch {
		var pb dto.Metric
		if m.Write(&pb) != nil || pb.Counter == nil {
			continue
		}
		total += pb.Counter.GetValue()
		for _, l := range pb.Label {
			if l.GetName() == "outcome" && l.GetValue() == "error" {
				errored += pb.Counter.GetValue()
			}
		}
	}
	return total, errored
}

// sessionRows are the newest Legacy sessions as /status lists them.
func sessionRows(list []legacy.SessionSummary, now time.Time) []status.Session {
	out := make([]status.Session, 0, len(list))
	for _, s := range list {
		out = append(out, status.Session{ID: s.ID[:min(len(s.ID), sessionIDPrefix)], Client: s.Client, ClientVersion: s.ClientVersion,
			Revision: s.Revision, Principal: s.Principal.Subject, Created: s.Created.UTC(),
			AgeSeconds: int64(now.Sub(s.Created).Seconds()), IdleSeconds: int64(now.Sub(s.LastActive).Seconds()),
			BackendSessions: s.BackendSessions})
	}
	return out
}
