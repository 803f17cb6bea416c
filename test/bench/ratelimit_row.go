package main

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/vmcp/vmcp/test/internal/redisstat"
)

// rlRule is a rate limit every bench call matches and none exceeds.
const rlRule = "rate_limits:\n  - tools: [\"*\"]\n    requests: 1000000\n    period: 1s\n"

// runRateLimit is the ratelimit row: on the Legacy and the Modern call
// rows, vmcp with a matching rate-limit rule in memory and on a private
// redis-server, against the same vmcp without the rule (memory; and on
// the same Redis), measured in the same interleaved rounds, shortened
// (1 s c=1 and c=N per round): c=N throughput and vmcp CPU per call as
// ratios, and Redis script runs per check.
func runRateLimit(tmp string) error {
	if _, err := exec.LookPath("redis-server"); err != nil {
		fmt.Println("\n== rate limits: skipped: redis-server is not on PATH (make redis installs it)")
		return nil
	}
	d1, dN, w := *dur1, *durN, *walkTime
	*dur1, *durN, *walkTime = time.Second, time.Second, 0
	defer func() { *dur1, *durN, *walkTime = d1, dN, w }()
	for _, r := range []row{{"Legacy client → stateful backend", legacyVersion, false}, {"Modern client → stateless backend", "", true}} {
		if err := rateLimitRow(tmp, r); err != nil {
			return fmt.Errorf("ratelimit, %s: %w", r.name, err)
		}
	}
	return nil
}

// rateLimitRow measures row r's four vmcps.
func rateLimitRow(tmp string, r row) error {
	fmt.Printf("\n== rate limits, %s (a matching rule ÷ none; %d rounds of 1 s c=1 and c=%d)\n", r.name, *rounds, *conc)
	rs, err := redisstat.Start()
	if err != nil {
		return err
	}
	defer rs.Stop()
	be, beURL, err := startListening(*echoBin, echoArgs(r), nil)
	if err != nil {
		return fmt.Errorf("echoserver: %w", err)
	}
	defer be.stop()
	redisCfg := func(id string) string { return clusterYAML("redis_url: "+rs.URL(), id) }
	var targets []*target
	for _, v := range []struct{ name, extra string }{
		{"vmcp", ""}, {"vmcp+rl", rlRule}, {"vmcp+redis", redisCfg("bench-a")}, {"vmcp+redis+rl", redisCfg("bench-b") + rlRule},
	} {
		vm, url, err := startVMCP(tmp, beURL, v.extra)
		if err != nil {
			return fmt.Errorf("%s: %w", v.name, err)
		}
		defer vm.stop()
		t := &target{name: v.name, url: url, vmcp: vm, hop: vm, be: be}
		if err := t.connect(r.client); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		defer t.close()
		if err := t.warm(); err != nil {
			return fmt.Errorf("%s: %w", t.name, err)
		}
		targets = append(targets, t)
	}
	rdb := rs.Client()
	defer rdb.Close()
	s0, err := redisstat.Read(context.Background(), rdb)
	if err != nil {
		return err
	}
	c0, err := rlChecks(targets[3].url)
	if err != nil {
		return err
	}
	res, err := runRounds(targets, r)
	if err != nil {
		return err
	}
	s1, err := redisstat.Read(context.Background(), rdb)
	if err != nil {
		return err
	}
	c1, err := rlChecks(targets[3].url)
	if err != nil {
		return err
	}
	printRateLimit(res, float64(s1.Sub(s0).Scripts())/float64(c1-c0), c1-c0)
	return nil
}

// printRateLimit prints the medians of each round's ratios.
func printRateLimit(res map[string][]result, scriptsPerCheck float64, checks int64) {
	ratio := func(on, off string, f func(result) float64) float64 {
		a, b := res[on], res[off]
		rs := make([]float64, len(a))
		for i := range a {
			rs[i] = f(a[i]) / f(b[i])
		}
		return medianBy(rs, func(x float64) float64 { return x })
	}
	rps := func(r result) float64 { return r.rpsN }
	cpu := func(r result) float64 { return r.cpuUS }
	fmt.Printf("in memory ÷ without: c=%d throughput %.2f×, vmcp CPU µs/call %.0f → %.0f (%.2f×)\n", *conc,
		ratio("vmcp+rl", "vmcp", rps), median(res["vmcp"]).cpuUS, median(res["vmcp+rl"]).cpuUS, ratio("vmcp+rl", "vmcp", cpu))
	fmt.Printf("on Redis ÷ on Redis without: c=%d throughput %.2f×, vmcp CPU µs/call %.0f → %.0f (%.2f×); Redis script runs per check %.2f (%d checks)\n", *conc,
		ratio("vmcp+redis+rl", "vmcp+redis", rps), median(res["vmcp+redis"]).cpuUS, median(res["vmcp+redis+rl"]).cpuUS, ratio("vmcp+redis+rl", "vmcp+redis", cpu),
		scriptsPerCheck, checks)
}

// rlChecks is the sum of vmcp_rate_limit_total of the vmcp serving mcpURL.
func rlChecks(mcpURL string) (int64, error) {
	resp, err := http.Get(strings.TrimSuffix(mcpURL, "/mcp") + "/metrics")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var n int64
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if line := sc.Text(); strings.HasPrefix(line, "vmcp_rate_limit_total{") {
			v, err := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if err != nil {
				return 0, fmt.Errorf("metrics: %q: %w", line, err)
			}
			n += int64(v)
		}
	}
	return n, sc.Err()
}
