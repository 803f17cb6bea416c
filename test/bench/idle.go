package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The idle row: what an idle Legacy session (initialized, its standalone
// GET stream open, no call made) costs the process that serves it, at each
// count of -idle sessions: resident memory, goroutines and file descriptors
// per session, directly on the backend, through vmcp and through the plain
// proxy; then, after every session of the largest count is closed, how far
// vmcp's RSS comes back within -idle-settle.
var (
	idleCounts = flag.String("idle", "200,2000,10000", "idle Legacy session counts of the idle row")
	idleSettle = flag.Duration("idle-settle", time.Minute, "how long the idle row waits for RSS to come back after the sessions close")
)

// footprint is one reading of a process: resident set in KiB, goroutines
// (from its /debug/pprof) and open file descriptors.
type footprint struct{ rssKB, goroutines, fds float64 }

func (f footprint) minus(g footprint) footprint {
	return footprint{f.rssKB - g.rssKB, f.goroutines - g.goroutines, f.fds - g.fds}
}

func (f footprint) per(n int) footprint {
	return footprint{f.rssKB / float64(n), f.goroutines / float64(n), f.fds / float64(n)}
}

// footprint reads p's current VmRSS, goroutine count and open fds.
func (p *proc) footprint() footprint {
	var f footprint
	f.rssKB = p.statusKB("VmRSS:")
	if ents, err := os.ReadDir(fmt.Sprintf("/proc/%d/fd", p.cmd.Process.Pid)); err == nil {
		f.fds = float64(len(ents))
	}
	if b, err := get("http://" + p.pprofAddr + "/debug/pprof/goroutine?debug=1"); err == nil {
		line, _, _ := bytes.Cut(b, []byte("\n"))
		if v, ok := strings.CutPrefix(string(line), "goroutine profile: total "); ok {
			f.goroutines, _ = strconv.ParseFloat(v, 64)
		}
	}
	return f
}

// settled polls p until its goroutine count holds still for three readings
// 200 ms apart (at most 20 s) and returns the last reading: connections
// and streams opened just before are then all in place.
func (p *proc) settled() footprint {
	last, same := p.footprint(), 0
	for deadline := time.Now().Add(20 * time.Second); same < 3 && time.Now().Before(deadline); {
		time.Sleep(200 * time.Millisecond)
		f := p.footprint()
		if f.goroutines == last.goroutines {
			same++
		} else {
			same = 0
		}
		last = f
	}
	return last
}

// idle waits until p's goroutines and then its RSS settle (settleRSS) and
// takes a footprint: idle means a while after the last session opened, once
// the runtime has handed back what opening them left behind.
func (p *proc) idle() footprint {
	p.settled()
	p.settleRSS()
	return p.settled()
}

// idleTarget is one process serving idle sessions: the backend, vmcp or
// the plain proxy, with the URL its clients use.
type idleTarget struct {
	name string
	url  string
	proc *proc
}

// idleResult is one target at one count: the cost per session, and for
// vmcp at the largest count the RSS before, and after the sessions closed.
type idleResult struct {
	per               footprint
	loadedRSS         float64 // KiB, with the n sessions open
	before, afterRSS  float64 // KiB
	after             time.Duration
	skipped, returned bool
}

// openIdle opens n Legacy sessions on url, 64 at a time, each with its own
// GET stream, and returns them with their clients' transport.
func openIdle(url string, n int) ([]*mcp.ClientSession, *http.Transport, error) {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 64
	hc := &http.Client{Transport: tr}
	out := make([]*mcp.ClientSession, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c := mcp.NewClient(&mcp.Implementation{Name: "bench-idle", Version: "1"}, nil)
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			cs, err := c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
			if err != nil {
				errs <- err
				return
			}
			out[i] = cs
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		closeIdle(out, tr)
		return nil, nil, fmt.Errorf("opening %d idle sessions: %w", n, err)
	}
	return out, tr, nil
}

// closeIdle ends every session (DELETE), 64 at a time, then closes the
// clients' connections (the clients are gone).
func closeIdle(ss []*mcp.ClientSession, tr *http.Transport) {
	defer tr.CloseIdleConnections()
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for _, cs := range ss {
		if cs == nil {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() { defer func() { <-sem }(); _ = cs.Close() })
	}
	wg.Wait()
}

// measureIdle opens n idle sessions on t and returns their cost per
// session; with watchRSS it then closes them and waits up to -idle-settle
// for t's RSS to come within 2× of pre, its RSS in KiB before any load.
func measureIdle(t idleTarget, n int, watchRSS bool, pre float64) (idleResult, error) {
	var r idleResult
	base := t.proc.idle()
	ss, tr, err := openIdle(t.url, n)
	if err != nil {
		return r, err
	}
	loaded := t.proc.idle()
	r.per, r.loadedRSS = loaded.minus(base).per(n), loaded.rssKB
	start := time.Now()
	closeIdle(ss, tr)
	if !watchRSS {
		t.proc.settled()
		return r, nil
	}
	r.before = pre
	for {
		r.afterRSS, r.after = t.proc.statusKB("VmRSS:"), time.Since(start)
		if r.returned = r.afterRSS <= 2*r.before; r.returned || r.after >= *idleSettle {
			return r, nil
		}
		time.Sleep(time.Second)
	}
}
