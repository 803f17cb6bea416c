package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/vmcp/vmcp/test/livemcpbench"
)

// searchClient connects one client, measures the definitions' size, and
// asks every question searchRounds times (limit 10): the first round's
// results are scored, every call is timed.
func searchClient(url, version string, tasks []livemcpbench.Task, present func(string) bool) (searchFigures, error) {
	var f searchFigures
	c := mcp.NewClient(&mcp.Implementation{Name: "bench-search", Version: "1"}, &mcp.ClientOptions{Capabilities: &mcp.ClientCapabilities{}})
	hc := &http.Client{Transport: http.DefaultTransport.(*http.Transport).Clone()}
	cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		return f, err
	}
	defer cs.Close()
	lt, err := cs.ListTools(ctx, nil)
	if err != nil {
		return f, err
	}
	defs, _ := json.Marshal(lt.Tools)
	f.defs = len(defs)
	results := map[string][]string{}
	var durs, plain []time.Duration
	for range max(1, *searchRounds) {
		for _, t := range tasks {
			start := time.Now()
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "search_tools", Arguments: map[string]any{"query": t.Question, "limit": 10}})
			durs = append(durs, time.Since(start))
			if err != nil {
				return f, err
			}
			if _, ok := results[t.Question]; !ok {
				results[t.Question], err = originalNames(res)
				if err != nil {
					return f, err
				}
			}
			if d, err := plainCall(cs, res); err == nil {
				plain = append(plain, d)
			}
		}
	}
	f.p50, f.p99 = percentiles(durs)
	if len(plain) > 0 {
		f.plainP50, f.plainP99 = percentiles(plain)
	}
	f.scores = livemcpbench.Score(tasks, present, func(q string) []string { return results[q] })
	return f, nil
}

// plainCall times a direct call of the first tool res found (its canned
// result), the floor of any tools/call through vmcp on this machine now.
func plainCall(cs *mcp.ClientSession, res *mcp.CallToolResult) (time.Duration, error) {
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return 0, err
	}
	var out struct {
		Tools []struct{ Name string } `json:"tools"`
	}
	if err := json.Unmarshal(b, &out); err != nil || len(out.Tools) == 0 {
		return 0, fmt.Errorf("no tool found")
	}
	start := time.Now()
	_, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: out.Tools[0].Name, Arguments: map[string]any{}})
	return time.Since(start), err
}

// percentiles are durs' p50 and p99 (durs is sorted).
func percentiles(durs []time.Duration) (p50, p99 time.Duration) {
	slices.Sort(durs)
	return durs[len(durs)/2], durs[min(len(durs)-1, len(durs)*99/100)]
}

// originalNames are a search_tools result's tools by their backend's own
// names (the advertised name less the "{backend}_" prefix).
func originalNames(res *mcp.CallToolResult) ([]string, error) {
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return nil, err
	}
	var out struct {
		Tools []struct{ Name, Backend string } `json:"tools"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, err
	}
	var names []string
	for _, t := range out.Tools {
		names = append(names, strings.TrimPrefix(t.Name, t.Backend+"_"))
	}
	return names, nil
}

// printSearch prints one client's line of the search row with the targets.
func printSearch(tools int, rev string, f searchFigures) {
	line := fmt.Sprintf("  %6d tools %-6s search in vmcp p50 %s p99 %s; round trip p50 %s p99 %s (a plain tools/call meanwhile: p50 %s p99 %s), definitions %d bytes",
		tools, rev, fmtDur(f.vmcpP50), fmtDur(f.vmcpP99), fmtDur(f.p50), fmtDur(f.p99), fmtDur(f.plainP50), fmtDur(f.plainP99), f.defs)
	if tools < 1000 {
		s := f.scores
		line += fmt.Sprintf("; Recall@5 %.3f Recall@10 %.3f hit@3 %.3f (%d tasks): %s", s.Recall5, s.Recall10, s.Hit3, s.Tasks,
			verdict(s.Recall5 >= targetRecall5, "Recall@5 ≥ %.2f", targetRecall5))
	} else {
		line += "; " + verdict(f.vmcpP99 <= targetSearchP99, "p99 in vmcp ≤ %s", targetSearchP99)
	}
	fmt.Println(line + ", " + verdict(f.defs < targetDefsBytes, "definitions < %d bytes", targetDefsBytes))
}
