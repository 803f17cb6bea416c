package metatools

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/aggregator"
	"github.com/vmcp/vmcp/pkg/upstream"
)

// TestSearchTimeIsMeasuredInVmcp: each search_tools call and each index
// build is one observation of its histogram, so the bench reports the
// time vmcp spends searching apart from the HTTP round trip.
func TestSearchTimeIsMeasuredInVmcp(t *testing.T) {
	t.Parallel()
	agg := aggregator.New(aggregator.Policy{Own: Own(true, false)}, nil)
	agg.Update(aggregator.Inventory{Backend: "wx", Tools: []*mcp.Tool{{Name: "get_forecast", Description: "Weather forecast.",
		InputSchema: map[string]any{"type": "object"}}}})
	tools := New(agg, nil, nil, nil)
	reg := prometheus.NewPedanticRegistry()
	tools.Instrument(reg)
	req := &upstream.Request{Method: "tools/call", Name: SearchName}
	for range 3 {
		_, err := tools.Call(context.Background(), req, json.RawMessage(`{"query":"weather"}`))
		require.NoError(t, err)
	}
	n, err := testutil.GatherAndCount(reg, SearchSecondsMetric, BuildSecondsMetric)
	require.NoError(t, err)
	require.Equal(t, 2, n) // one series each
	mfs, err := reg.Gather()
	require.NoError(t, err)
	counts := map[string]uint64{}
	for _, mf := range mfs {
		counts[mf.GetName()] = mf.GetMetric()[0].GetHistogram().GetSampleCount()
	}
	require.Equal(t, uint64(3), counts[SearchSecondsMetric])
	require.Equal(t, uint64(1), counts[BuildSecondsMetric])
}

// TestRunDoesNotRebuildWhatASearchIndexed: a search that finds the
// current catalogue unindexed builds its index once; Run's refresh of the
// same catalogue then uses it instead of building it again.
func TestRunDoesNotRebuildWhatASearchIndexed(t *testing.T) {
	t.Parallel()
	agg := aggregator.New(aggregator.Policy{Own: Own(true, false)}, nil)
	agg.Update(aggregator.Inventory{Backend: "wx", Tools: []*mcp.Tool{{Name: "get_forecast", Description: "Weather forecast.",
		InputSchema: map[string]any{"type": "object"}}}})
	tools := New(agg, nil, nil, nil)
	reg := prometheus.NewPedanticRegistry()
	tools.Instrument(reg)
	req := &upstream.Request{Method: "tools/call", Name: SearchName}
	require.Len(t, tools.Search(context.Background(), req, "weather", 5), 1)
	tools.refresh(context.Background())
	require.Len(t, tools.Search(context.Background(), req, "weather", 5), 1)
	mfs, err := reg.Gather()
	require.NoError(t, err)
	for _, mf := range mfs {
		if mf.GetName() == BuildSecondsMetric {
			require.Equal(t, uint64(1), mf.GetMetric()[0].GetHistogram().GetSampleCount())
		}
	}
}
