package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os/exec"
	"path/filepath"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The age row: does a long-lived Legacy session's memory grow with its
// number of requests? Four Legacy sessions call a stdio backend's echo
// tool (relayed through upstream.Core.Do on the session's connection; the
// go-sdk handler that served it before kept a record per POST stream in
// its event store), and vmcp's heap after a forced GC
// is read at each checkpoint of calls made; the ratio to the first
// checkpoint should stay near 1.

const ageSessions = 4

var ageCheckpoints = []int{1_000, 10_000, 50_000}

// runAge runs the age row.
func runAge(tmp string) error {
	fmt.Printf("\n== long-lived Legacy sessions on a stdio backend (%d sessions): vmcp heap after GC by calls made\n", ageSessions)
	bin := filepath.Join(tmp, "stdioserver")
	if out, err := exec.Command("go", "build", "-o", bin, "./test/integration/harness/stdioserver").CombinedOutput(); err != nil {
		return fmt.Errorf("building stdioserver: %w: %s", err, out)
	}
	v, url, err := startVMCPConfig(tmp, fmt.Sprintf("backends:\n  - name: echo\n    command: %s\naggregation:\n  conflict_resolution: priority\n  priority: [echo]\n", bin))
	if err != nil {
		return err
	}
	defer v.stop()
	sessions, err := ageConnect(url)
	if err != nil {
		return err
	}
	defer func() {
		for _, cs := range sessions {
			_ = cs.Close()
		}
	}()
	made, first := 0, 0.0
	for _, n := range ageCheckpoints {
		if err := ageCalls(sessions, n-made); err != nil {
			return err
		}
		made = n
		heap, err := heapAfterGC(v)
		if err != nil {
			return err
		}
		if first == 0 {
			first = heap
		}
		fmt.Printf("  %6d calls: vmcp heap after GC %6.1f MiB  (%.2f× at %d)\n", n, heap, heap/first, ageCheckpoints[0])
	}
	return nil
}

// ageConnect opens the row's Legacy sessions.
func ageConnect(url string) ([]*mcp.ClientSession, error) {
	var out []*mcp.ClientSession
	for range ageSessions {
		c := mcp.NewClient(&mcp.Implementation{Name: "bench-age", Version: "1"}, nil)
		cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
		cs, err := c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: url}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
		cancel()
		if err != nil {
			return nil, err
		}
		out = append(out, cs)
	}
	return out, nil
}

// ageCalls makes n echo calls spread over sessions, one caller each.
func ageCalls(sessions []*mcp.ClientSession, n int) error {
	var wg sync.WaitGroup
	errs := make(chan error, len(sessions))
	for i, cs := range sessions {
		k := n / len(sessions)
		if i < n%len(sessions) {
			k++
		}
		wg.Go(func() {
			for range k {
				res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
				if err == nil && res.IsError {
					err = fmt.Errorf("echo failed: %v", res.Content)
				}
				if err != nil {
					errs <- err
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// heapAfterGC forces a collection in vmcp (a heap profile with gc=1) and
// returns its HeapAlloc in MiB from /debug/vars.
func heapAfterGC(p *proc) (float64, error) {
	if _, err := get("http://" + p.pprofAddr + "/debug/pprof/heap?gc=1"); err != nil {
		return 0, err
	}
	resp, err := http.Get("http://" + p.pprofAddr + "/debug/vars")
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	var v struct {
		Memstats struct{ HeapAlloc uint64 } `json:"memstats"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil {
		return 0, err
	}
	return float64(v.Memstats.HeapAlloc) / (1 << 20), nil
}
