package telemetry

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Live reads the state the gauges report, at scrape time (nil funcs are
// left out).
type Live struct {
	LegacySessions func() int            // live Legacy client sessions
	GetStreams     func() int            // open Legacy GET streams at the endpoint
	ListenStreams  func() int            // open Modern subscriptions/listen streams
	ParkedCalls    func() int            // Legacy backend calls parked between MRTR rounds
	Backends       func() []BackendState // every configured backend
}

// BackendState is one backend as vmcp_backend_up and vmcp_backend_tools
// report it.
type BackendState struct {
	Name  string
	Up    bool // connected (ready)
	Tools int  // tools the backend lists
}

// Observe registers the gauges over live on m's registry: vmcp_legacy_sessions,
// vmcp_get_streams, vmcp_listen_streams, vmcp_parked_calls,
// vmcp_backend_up{backend} and vmcp_backend_tools{backend}. Call it once.
func (m *Metrics) Observe(live Live) {
	gauge := func(name, help string, f func() int) {
		if f != nil {
			m.Registry.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: name, Help: help},
				func() float64 { return float64(f()) }))
		}
	}
	gauge("vmcp_legacy_sessions", "Live Legacy client sessions on this node.", live.LegacySessions)
	gauge("vmcp_get_streams", "Open Legacy GET (server-to-client) streams on this node.", live.GetStreams)
	gauge("vmcp_listen_streams", "Open Modern subscriptions/listen streams on this node.", live.ListenStreams)
	gauge("vmcp_parked_calls", "Legacy backend calls parked between multi round-trip rounds for Modern clients.", live.ParkedCalls)
	if live.Backends != nil {
		m.Registry.MustRegister(backendCollector(live.Backends))
	}
}

var (
	backendUpDesc = prometheus.NewDesc("vmcp_backend_up",
		"Whether the backend is connected (1) or not (0).", []string{"backend"}, nil)
	backendToolsDesc = prometheus.NewDesc("vmcp_backend_tools",
		"Tools the backend lists.", []string{"backend"}, nil)
)

// backendCollector reports each backend's state as it is when scraped.
type backendCollector func() []BackendState

func (c backendCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- backendUpDesc
	ch <- backendToolsDesc
}

func (c backendCollector) Collect(ch chan<- prometheus.Metric) {
	for _, b := range c() {
		up := 0.0
		if b.Up {
			up = 1
		}
		ch <- prometheus.MustNewConstMetric(backendUpDesc, prometheus.GaugeValue, up, b.Name)
		ch <- prometheus.MustNewConstMetric(backendToolsDesc, prometheus.GaugeValue, float64(b.Tools), b.Name)
	}
}

// methods are the JSON-RPC methods of both revisions that label metrics by
// name; any other (a client can send anything) is "other", so the label's
// cardinality stays bounded.
var methods = map[string]bool{}

func init() {
	for _, m := range []string{"initialize", "ping", "tools/list", "tools/call", "prompts/list", "prompts/get",
		"resources/list", "resources/read", "resources/templates/list", "resources/subscribe", "resources/unsubscribe",
		"completion/complete", "logging/setLevel", "server/discover", "subscriptions/listen",
		"notifications/initialized", "notifications/cancelled", "notifications/roots/list_changed", "notifications/progress"} {
		methods[m] = true
	}
}

// MethodLabel is method as a metric label: a known MCP method as is, ""
// as "", anything else "other".
func MethodLabel(method string) string {
	if method == "" || methods[method] {
		return method
	}
	return "other"
}
