package main

import (
	"bufio"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/vmcp/vmcp/pkg/metatools"
	"github.com/vmcp/vmcp/test/livemcpbench"
)

// histogram is a scraped cumulative histogram: its buckets' upper bounds
// (seconds, ascending, +Inf last) with their counts, and its sum.
type histogram struct {
	le     []float64
	counts []float64
	sum    float64
}

// scrapeHistograms reads vmcp's /metrics (base: vmcp's root URL) and
// returns its unlabelled histograms named in names.
func scrapeHistograms(base string, names ...string) (map[string]histogram, error) {
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]histogram{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		for _, name := range names {
			if !strings.HasPrefix(line, name+"_") {
				continue
			}
			if err := addSample(out, name, line); err != nil {
				return nil, err
			}
		}
	}
	return out, sc.Err()
}

// addSample adds one exposition line of histogram name (_bucket{le=…},
// _sum or _count; buckets come in ascending order) to out.
func addSample(out map[string]histogram, name, line string) error {
	sp := strings.LastIndexByte(line, ' ')
	v, err := strconv.ParseFloat(line[sp+1:], 64)
	if err != nil {
		return fmt.Errorf("metrics: %q: %w", line, err)
	}
	h := out[name]
	switch rest := line[len(name):sp]; {
	case strings.HasPrefix(rest, `_bucket{le="`):
		le, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimPrefix(rest, `_bucket{le="`), `"}`), 64)
		if err != nil {
			return fmt.Errorf("metrics: %q: %w", line, err)
		}
		h.le, h.counts = append(h.le, le), append(h.counts, v)
	case rest == "_sum":
		h.sum = v
	}
	out[name] = h
	return nil
}

// minus is h's observations since before (same buckets).
func (h histogram) minus(before histogram) histogram {
	d := histogram{le: h.le, counts: make([]float64, len(h.counts)), sum: h.sum - before.sum}
	for i := range h.counts {
		d.counts[i] = h.counts[i]
		if i < len(before.counts) {
			d.counts[i] -= before.counts[i]
		}
	}
	return d
}

// count is the number of observations.
func (h histogram) count() float64 {
	if len(h.counts) == 0 {
		return 0
	}
	return h.counts[len(h.counts)-1]
}

// quantile is the q-quantile, interpolated linearly within its bucket as
// Prometheus' histogram_quantile does (0 without observations).
func (h histogram) quantile(q float64) time.Duration {
	n := h.count()
	if n == 0 {
		return 0
	}
	rank, lower, below := q*n, 0.0, 0.0
	for i, c := range h.counts {
		if c >= rank {
			upper := h.le[i]
			if math.IsInf(upper, 1) {
				upper = lower
			}
			v := lower + (upper-lower)*(rank-below)/math.Max(c-below, 1)
			return time.Duration(v * float64(time.Second))
		}
		lower, below = h.le[i], c
	}
	return 0
}

// searchedIn is vmcp's own search_tools time p50 and p99 since before:
// the search histogram's growth since that scrape.
func searchedIn(vmURL string, before map[string]histogram) (p50, p99 time.Duration, err error) {
	after, err := scrapeHistograms(trimURL(vmURL), metatools.SearchSecondsMetric)
	if err != nil {
		return 0, 0, err
	}
	d := after[metatools.SearchSecondsMetric].minus(before[metatools.SearchSecondsMetric])
	if d.count() == 0 {
		return 0, 0, fmt.Errorf("metrics: no %s observations (is tool search instrumented?)", metatools.SearchSecondsMetric)
	}
	return d.quantile(0.5), d.quantile(0.99), nil
}

// buildTimes describes the index builds so far: how many, their mean and
// their largest (the upper bound of the highest bucket reached).
func buildTimes(h histogram) string {
	n := h.count()
	if n == 0 {
		return "no index builds"
	}
	top := 0.0
	for i := len(h.counts) - 1; i > 0; i-- {
		if h.counts[i] > h.counts[i-1] {
			top = h.le[i]
			break
		}
	}
	if top == 0 && h.counts[0] > 0 {
		top = h.le[0]
	}
	mean := time.Duration(h.sum / n * float64(time.Second))
	return fmt.Sprintf("%d index builds while listing, mean %s, largest ≤ %s", int(n), fmtDur(mean), fmtDur(time.Duration(top*float64(time.Second))))
}

// trimURL is vmcp's root URL from its /mcp endpoint.
func trimURL(mcpURL string) string { return strings.TrimSuffix(mcpURL, "/mcp") }

// timedSearchClient is searchClient with vmcp's own search time, from the
// search histogram scraped before and after.
func timedSearchClient(vmURL, version string, tasks []livemcpbench.Task, present func(string) bool) (searchFigures, error) {
	before, err := scrapeHistograms(trimURL(vmURL), metatools.SearchSecondsMetric)
	if err != nil {
		return searchFigures{}, err
	}
	f, err := searchClient(vmURL, version, tasks, present)
	if err == nil {
		f.vmcpP50, f.vmcpP99, err = searchedIn(vmURL, before)
	}
	return f, err
}
