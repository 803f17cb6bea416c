package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Helpers of the cluster rows (redis, forward): vmcp nodes on a private
// redis-server, and clients whose requests can be sent to another node
// than the one that created their session.

// benchStateKey is the mrtr.state_key the nodes of one bench cluster share.
const benchStateKey = "vmcp-bench-state-key-0123456789abcdef"

// clusterYAML is the config of node id on the Redis that redis names
// (one line of the cluster section: "redis_url: URL" or "redis_cluster: [...]").
func clusterYAML(redis, id string) string {
	return fmt.Sprintf("cluster:\n  %s\n  node_id: %s\nmrtr:\n  state_key: %s\nsessions:\n  max: 30000\n", redis, id, benchStateKey)
}

// routeTransport is the HTTP transport of cluster-row clients. It counts
// the standalone GET streams answered 200 (the node took the stream's
// lease before answering), and with to set ("host:port") sends every
// request of an established session (Mcp-Session-Id set) there instead:
// the session is created on one node and used through another.
type routeTransport struct {
	base *http.Transport
	to   string
	gets atomic.Int64
}

func newRouteTransport(to string) *routeTransport {
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConns = 0
	tr.MaxIdleConnsPerHost = 4 * (*conc + 1)
	return &routeTransport{base: tr, to: to}
}

func (t *routeTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if t.to != "" && r.Header.Get("Mcp-Session-Id") != "" {
		r = r.Clone(r.Context())
		r.URL.Host, r.Host = t.to, t.to
	}
	resp, err := t.base.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
		t.gets.Add(1)
	}
	return resp, err
}

// waitGETs waits until n GET streams were answered (at most 60 s).
func (t *routeTransport) waitGETs(n int64) error {
	for deadline := time.Now().Add(time.Minute); t.gets.Load() < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			return fmt.Errorf("%d of %d GET streams answered within 60s", t.gets.Load(), n)
		}
	}
	return nil
}

// openSessions opens n Legacy sessions on url through rt, *conc at a time,
// and returns them with the time each was connected.
func openSessions(url string, n int, rt *routeTransport) ([]*mcp.ClientSession, []time.Time, error) {
	hc := &http.Client{Transport: rt}
	out, at := make([]*mcp.ClientSession, n), make([]time.Time, n)
	errs := make(chan error, n)
	sem := make(chan struct{}, *conc)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			c := mcp.NewClient(&mcp.Implementation{Name: "bench-cluster", Version: "1"}, nil)
			cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
			defer cancel()
			cs, err := c.Connect(cctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, &mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
			if err != nil {
				errs <- err
				return
			}
			out[i], at[i] = cs, time.Now()
		})
	}
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		closeSessions(out)
		return nil, nil, fmt.Errorf("opening %d sessions: %w", n, err)
	}
	return out, at, nil
}

// closeSessions ends every session (DELETE), *conc at a time, and returns
// the time each was closed.
func closeSessions(ss []*mcp.ClientSession) []time.Time {
	at := make([]time.Time, len(ss))
	sem := make(chan struct{}, *conc)
	var wg sync.WaitGroup
	for i, cs := range ss {
		if cs == nil {
			continue
		}
		sem <- struct{}{}
		wg.Go(func() { defer func() { <-sem }(); _ = cs.Close(); at[i] = time.Now() })
	}
	wg.Wait()
	return at
}

// callEach makes one tools/call echo on every session, *conc at a time.
func callEach(ss []*mcp.ClientSession) error {
	errs := make(chan error, len(ss))
	sem := make(chan struct{}, *conc)
	var wg sync.WaitGroup
	for _, cs := range ss {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if _, err := cs.CallTool(ctx, callParams); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// ownedSessions is the number of Legacy sessions node base (its MCP URL)
// owns, from its /readyz.
func ownedSessions(mcpURL string) (int, error) {
	b, err := get(strings.TrimSuffix(mcpURL, "/mcp") + "/readyz")
	if err != nil {
		return 0, err
	}
	var v struct {
		Cluster struct {
			Sessions int `json:"sessions"`
		} `json:"cluster"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return 0, fmt.Errorf("/readyz: %w", err)
	}
	return v.Cluster.Sessions, nil
}
