package vmcp_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/config"
	"github.com/vmcp/vmcp/test/integration/harness"
	"go.opentelemetry.io/otel/trace"
)

// readmeMetrics returns the metric names in the README's Telemetry table,
// and those documented as appearing with their first event.
func readmeMetrics(t *testing.T) (all, firstEvent []string) {
	data, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, section, ok := strings.Cut(string(data), "\n## Telemetry\n")
	require.True(t, ok, "README has a Telemetry section")
	section, _, _ = strings.Cut(section, "\n## ")
	row := regexp.MustCompile("(?m)^\\| `(vmcp_[a-z_]+)`.*$")
	for _, m := range row.FindAllStringSubmatch(section, -1) {
		all = append(all, m[1])
		if strings.Contains(m[0], "first event") || strings.Contains(m[0], "only with `") { // not served by every server
			firstEvent = append(firstEvent, m[1])
		}
	}
	require.NotEmpty(t, all)
	return all, firstEvent
}

// Every metric the README names is on the server's registry after one
// call of each kind (a relayed Legacy call, a Legacy go-sdk-path call to a
// stdio backend, a Modern call, a failed call), except those documented
// as appearing with their first event; and the series count what
// happened, both revisions in one set.
func TestMetricsNamedInTheREADMEAreAllServed(t *testing.T) {
	log, opts := newSpanLog(t)
	b := startTracedBackend(t, false)
	stdio := harness.StdioBackend(t, "pipe")
	gone := config.Backend{Name: "gone", URL: "http://127.0.0.1:1/mcp", Transport: config.TransportStreamableHTTP}
	v := harness.StartVMCPWithOptions(t, opts, nil, b.config(), stdio, gone)

	legacy := connectTraced(t, v, "2025-11-25", nil)
	echo(t, legacy, "alpha_echo", nil) // relayed
	echo(t, legacy, "pipe_echo", nil)  // go-sdk path
	_, err := legacy.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha_missing", Arguments: map[string]any{}})
	require.Error(t, err) // no backend request
	_, err = legacy.CallTool(context.Background(), &mcp.CallToolParams{Name: "alpha_boom", Arguments: map[string]any{}})
	require.Error(t, err) // a backend error
	modern := v.Connect(t, "", nil)
	require.Empty(t, modern.ID(), "a Modern client")
	echo(t, modern, "pipe_echo", nil)

	log.await(t, trace.SpanKindServer, "tools/call alpha_echo")
	log.await(t, trace.SpanKindServer, "tools/call alpha_missing")
	log.await(t, trace.SpanKindServer, "tools/call alpha_boom")
	log.awaitN(t, trace.SpanKindServer, "tools/call pipe_echo", 2) // Legacy and Modern

	m := v.Server.Metrics()
	families, err := m.Registry.Gather()
	require.NoError(t, err)
	served := map[string]bool{}
	for _, f := range families {
		served[f.GetName()] = true
	}
	all, firstEvent := readmeMetrics(t)
	for _, name := range all {
		if !served[name] && !strings.Contains(strings.Join(firstEvent, " "), name) {
			t.Errorf("%s is in the README but not served", name)
		}
	}

	require.Equal(t, 2.0, testutil.ToFloat64(m.Requests.WithLabelValues("tools/call", "legacy", "ok")))
	require.Equal(t, 2.0, testutil.ToFloat64(m.Requests.WithLabelValues("tools/call", "legacy", "error")), "unknown tool, backend error")
	require.Equal(t, 1.0, testutil.ToFloat64(m.BackendErrors.WithLabelValues("alpha", "tools/call", "legacy")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.Requests.WithLabelValues("tools/call", "modern", "ok")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.Requests.WithLabelValues("initialize", "legacy", "ok")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.BackendRequests.WithLabelValues("alpha", "tools/call", "legacy", "ok")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.BackendRequests.WithLabelValues("pipe", "tools/call", "legacy", "ok")))
	require.Equal(t, 1.0, testutil.ToFloat64(m.BackendRequests.WithLabelValues("pipe", "tools/call", "modern", "ok")))

	up := `
# HELP vmcp_backend_up Whether the backend is connected (1) or not (0).
# TYPE vmcp_backend_up gauge
vmcp_backend_up{backend="alpha"} 1
vmcp_backend_up{backend="gone"} 0
vmcp_backend_up{backend="pipe"} 1
`
	require.NoError(t, testutil.GatherAndCompare(m.Registry, strings.NewReader(up), "vmcp_backend_up"))
	require.Equal(t, 1.0, gaugeValue(t, m.Registry, "vmcp_legacy_sessions"))
}

// gaugeValue is the value of the unlabelled gauge name on reg.
func gaugeValue(t *testing.T, reg *prometheus.Registry, name string) float64 {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() == name {
			return f.GetMetric()[0].GetGauge().GetValue()
		}
	}
	t.Fatalf("%s not served", name)
	return 0
}

// The Grafana dashboard queries only metrics the README documents (so
// the ones vmcp serves), and every panel the README lists is on it.
func TestGrafanaDashboardUsesDocumentedMetrics(t *testing.T) {
	data, err := os.ReadFile("../../docs/grafana/vmcp-dashboard.json")
	require.NoError(t, err)
	var dash struct {
		Panels []struct {
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
	}
	require.NoError(t, json.Unmarshal(data, &dash))
	all, _ := readmeMetrics(t)
	documented := map[string]bool{}
	for _, m := range all {
		documented[m] = true
	}
	titles := map[string]bool{}
	metric := regexp.MustCompile(`vmcp_[a-z_]+`)
	for _, p := range dash.Panels {
		titles[p.Title] = true
		for _, tg := range p.Targets {
			for _, m := range metric.FindAllString(tg.Expr, -1) {
				m = strings.TrimSuffix(m, "_bucket")
				require.True(t, documented[m], "panel %q queries %s, which the README does not document", p.Title, m)
			}
		}
	}
	readme, err := os.ReadFile("../../README.md")
	require.NoError(t, err)
	_, grafana, _ := strings.Cut(string(readme), "### Grafana dashboard")
	grafana, _, _ = strings.Cut(grafana, "\n### ")
	for _, m := range regexp.MustCompile(`\*\*([^*]+)\*\*`).FindAllStringSubmatch(grafana, -1) {
		require.True(t, titles[m[1]], "README lists panel %q, not on the dashboard", m[1])
	}
}

// Once vmcp served GET streams on hijacked connections, their requests
// returned at once and vmcp_get_streams (then counting GET requests in
// flight) read 0 with every stream open.
func TestGetStreamsGaugeReadZeroWithStreamsServedOnHijackedConnections(t *testing.T) {
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := harness.StartVMCP(t, nil, b.Config())
	for range 3 {
		v.Connect(t, "2025-11-25", nil) // each opens its standalone GET stream
	}
	require.Eventually(t, func() bool { return v.Server.Cluster().OwnStreams() == 3 }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, 3.0, gaugeValue(t, v.Server.Metrics().Registry, "vmcp_get_streams"))
}

// A GET the node took over (its own stream) was still counted in flight
// until its handler returned, so for that while vmcp_get_streams counted
// the stream twice (read 4 with three streams open, under load).
func TestGetStreamsGaugeCountedATakenOverStreamTwice(t *testing.T) {
	b := harness.StartBackend(t, "alpha", harness.Stateful, func(s *mcp.Server) { harness.AddEcho(s, "echo") })
	v := harness.StartVMCP(t, nil, b.Config())
	taken, release := make(chan struct{}), make(chan struct{})
	srv := httptest.NewServer(v.Server.ObservedForTest(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		conn, _, err := http.NewResponseController(w).Hijack()
		if err == nil {
			defer conn.Close()
		}
		close(taken)
		<-release // the handler has not returned yet
	})))
	t.Cleanup(srv.Close)
	t.Cleanup(func() { close(release) })
	go func() {
		if resp, err := http.Get(srv.URL); err == nil {
			resp.Body.Close()
		}
	}()
	<-taken
	require.Equal(t, 0.0, gaugeValue(t, v.Server.Metrics().Registry, "vmcp_get_streams"), "a taken-over GET is the cluster's to count")
}
