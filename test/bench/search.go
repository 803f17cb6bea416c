package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/vmcp/vmcp/pkg/metatools"
	"github.com/vmcp/vmcp/test/livemcpbench"
)

// The search row (issue 31): LiveMCPBench's catalogue (70 servers, 527
// tools, served by one echoserver -catalogue process with canned results)
// behind vmcp with tool_search on (list: search_only); the 95 annotated
// questions through search_tools (limit 10) on a Legacy and a Modern
// client: Recall@5, Recall@10, hit@3 (test/livemcpbench.Score), the
// search's round-trip p50/p99, and the two definitions' size in tools/list.
// Then again with filler servers (every catalogue tool renamed) up to
// 10,000 tools: latency and size. At each size, the index builds while vmcp
// lists its backends at start, and the one rebuild after a reload that
// removes a backend (search_rebuild.go).
var (
	searchData   = flag.String("livemcpbench", livemcpbench.Dir(), "LiveMCPBench data directory (tools.json, tasks.json) of the search row")
	searchRounds = flag.Int("search-rounds", 5, "times the search row asks the 95 questions per client")
)

// Targets of the search row.
const (
	targetRecall5   = 0.60 // Recall@5 without embeddings
	targetSearchP99 = 5 * time.Millisecond
	targetDefsBytes = 6000
)

// searchProfileSecs is the CPU profile's length with -profile: the Modern
// client's searches (raise -search-rounds to fill it).
const searchProfileSecs = 5

// searchFigures are one client's figures in one phase.
type searchFigures struct {
	scores             livemcpbench.Scores
	p50, p99           time.Duration
	plainP50, plainP99 time.Duration // a direct call of a found tool, interleaved
	vmcpP50, vmcpP99   time.Duration // vmcp's own time in search_tools (its histogram)
	defs               int
}

// runSearch runs the search row and prints it.
func runSearch(tmp string) error {
	servers, tasks, err := livemcpbench.Load(*searchData)
	if err != nil {
		return fmt.Errorf("search row: %w (see -livemcpbench)", err)
	}
	base, distinct := 0, map[string]bool{}
	for _, s := range servers {
		base += len(s.Tools)
		for _, t := range s.Tools {
			distinct[t.Name] = true
		}
	}
	fill := (10000 - base + len(distinct) - 1) / len(distinct)
	be, u, err := startListening(*echoBin, []string{"-stateless", "-tools", "0", "-catalogue", *searchData, "-fill", fmt.Sprint(fill)}, nil)
	if err != nil {
		return fmt.Errorf("echoserver: %w", err)
	}
	defer be.stop()
	root := strings.TrimSuffix(u, "/mcp")
	fmt.Printf("\n== tool search: LiveMCPBench (%d servers, %d tools, %d tasks), search_tools via vmcp, %d rounds\n", len(servers), base, len(tasks), *searchRounds)
	for _, phase := range []struct {
		fill, tools int
	}{{0, base}, {fill, base + fill*len(distinct)}} {
		if err := searchPhase(tmp, root, servers, tasks, phase.fill, phase.tools); err != nil {
			return err
		}
	}
	return nil
}

// backendName is a LiveMCPBench server's name as a vmcp backend name.
var invalidBackend = regexp.MustCompile(`[^a-z0-9_-]+`)

func backendName(s string, taken map[string]bool) string {
	n := strings.Trim(invalidBackend.ReplaceAllString(strings.ToLower(s), "-"), "-_")
	if n == "" {
		n = "server"
	}
	for base, i := n, 2; taken[n]; i++ {
		n = fmt.Sprintf("%s-%d", base, i)
	}
	taken[n] = true
	return n
}

// searchPhase starts vmcp over the catalogue (and fill filler servers),
// waits until it has listed want tools, and measures both revisions.
func searchPhase(tmp, root string, servers []livemcpbench.Server, tasks []livemcpbench.Task, fill, want int) error {
	var entries []string
	taken := map[string]bool{}
	for i, s := range servers {
		entries = append(entries, fmt.Sprintf("  - name: %s\n    url: %s/lmb/%d/mcp\n", backendName(s.Name, taken), root, i))
	}
	for k := range fill {
		entries = append(entries, fmt.Sprintf("  - name: fill%d\n    url: %s/fill/%d/mcp\n", k, root, k))
	}
	vm, vmURL, err := startVMCPConfig(tmp, searchConfig(entries))
	if err != nil {
		return fmt.Errorf("vmcp: %w", err)
	}
	defer vm.stop()
	if err := awaitTools(strings.TrimSuffix(vmURL, "/mcp"), want); err != nil {
		return err
	}
	if hs, err := scrapeHistograms(trimURL(vmURL), metatools.BuildSecondsMetric); err == nil {
		fmt.Printf("  %6d tools: %s\n", want, buildTimes(hs[metatools.BuildSecondsMetric]))
	}
	present := map[string]bool{}
	for _, s := range servers {
		for _, t := range s.Tools {
			present[t.Name] = true
		}
	}
	for _, rev := range []struct{ name, version string }{{"Legacy", legacyVersion}, {"Modern", ""}} {
		var stopProfile func() error
		if *profileDir != "" && rev.version == "" {
			stopProfile = vm.startProfileFor(fmt.Sprintf("search-%d", want), searchProfileSecs)
		}
		f, err := timedSearchClient(vmURL, rev.version, tasks, func(n string) bool { return present[n] })
		if stopProfile != nil {
			if perr := stopProfile(); perr != nil {
				fmt.Println("bench: profile:", perr)
			}
		}
		if err != nil {
			return fmt.Errorf("search %s: %w", rev.name, err)
		}
		printSearch(want, rev.name, f)
	}
	return printRebuild(vm, trimURL(vmURL), searchConfig(entries[:len(entries)-1]), want)
}

// searchConfig is the row's configuration body with the given backends.
func searchConfig(entries []string) string {
	return "tool_search:\n  enabled: true\n  list: search_only\nbackends:\n" + strings.Join(entries, "")
}

// awaitTools waits (up to 60 s) until vmcp's /readyz counts want tools.
func awaitTools(base string, want int) error {
	n := 0
	for deadline := time.Now().Add(60 * time.Second); time.Now().Before(deadline); time.Sleep(200 * time.Millisecond) {
		var err error
		if n, err = readyTools(base); err == nil && n >= want {
			return nil
		}
	}
	return fmt.Errorf("vmcp listed %d of %d tools within 60s", n, want)
}

// readyzBody is the part of vmcp's /readyz the row reads.
type readyzBody struct {
	Backends []struct{ Tools int } `json:"backends"`
}

func readyz(base string) (readyzBody, error) {
	var r readyzBody
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return r, err
	}
	defer resp.Body.Close()
	err = json.NewDecoder(resp.Body).Decode(&r)
	return r, err
}
