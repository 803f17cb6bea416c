package main

import (
	"fmt"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// redisRun measures the phases of n sessions on vmURL.
func redisRun(m meter, vmURL string, n int) (redisPhases, error) {
	var p redisPhases
	time.Sleep(time.Second) // the node's first heartbeat and Redis connections
	s0, err := m.read()
	if err != nil {
		return p, err
	}
	if p.base, err = measure(m, func() error { time.Sleep(*redisBase); return nil }); err != nil {
		return p, err
	}
	rt := newRouteTransport("")
	defer rt.base.CloseIdleConnections()
	ss := make([]*mcp.ClientSession, n)
	defer func() { closeSessions(ss) }()
	if p.start, err = batched(m, n, func(lo, hi int) error { return openBatch(vmURL, ss[lo:hi], rt) }); err != nil {
		return p, err
	}
	s1, err := m.read()
	if err != nil {
		return p, err
	}
	p.keys, p.bytes = s1.Keys-s0.Keys, s1.UsedMemory-s0.UsedMemory
	if p.idle, err = measure(m, func() error { time.Sleep(*redisIdle); return nil }); err != nil {
		return p, err
	}
	if p.call, err = batched(m, n, func(lo, hi int) error { return callEach(ss[lo:hi]) }); err != nil {
		return p, err
	}
	perSession := float64(p.keys) / float64(n)
	p.del, err = batched(m, n, func(lo, hi int) error {
		closeSessions(ss[lo:hi])
		clear(ss[lo:hi])
		if waitKeys(m, s0.Keys+int64(float64(n-hi)*perSession+0.5), 5*time.Second) > 0 { // DELETE's cleanup may end after its response
			p.lagging++
		}
		return nil
	})
	if err == nil {
		p.keysLeft = waitKeys(m, s0.Keys, 5*time.Second)
	}
	return p, err
}

// openBatch opens len(ss) sessions into ss, at once, and waits until their
// GET streams were answered.
func openBatch(vmURL string, ss []*mcp.ClientSession, rt *routeTransport) error {
	want := rt.gets.Load() + int64(len(ss))
	opened, _, err := openSessions(vmURL, len(ss), rt)
	if err != nil {
		return err
	}
	copy(ss, opened)
	if err := rt.waitGETs(want); err != nil {
		return fmt.Errorf("GET streams: %w", err)
	}
	return nil
}

// waitKeys waits up to wait for Redis to hold no more than want keys and
// returns how many more it holds (-1 if Redis did not answer).
func waitKeys(m meter, want int64, wait time.Duration) int64 {
	for deadline := time.Now().Add(wait); ; time.Sleep(10 * time.Millisecond) {
		s, err := m.read()
		if err == nil && (s.Keys <= want || time.Now().After(deadline)) {
			return s.Keys - want
		}
		if err != nil && time.Now().After(deadline) {
			return -1
		}
	}
}
