package scale

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// legacyVersion is the Legacy revision the sessions pin.
const legacyVersion = "2025-11-25"

// openConc is how many sessions are opened, called or closed at a time.
const openConc = 32

// rotate, as hopTransport.pin, sends each request to the next node.
const rotate = -1

// hopTransport sends one session's requests to the nodes like a
// round-robin balancer that knows nothing about sessions: request k goes
// to node (first+k) mod len(nodes) (the initialize, request 0, to node
// first, which becomes the owner), or, with pin set to a node's index,
// every request to that node. It counts GET streams answered 200 in gets
// (a node answers once it took the stream's lease).
type hopTransport struct {
	base  http.RoundTripper
	nodes []*node
	first int
	sent  atomic.Int64
	pin   atomic.Int64
	gets  *atomic.Int64
}

func (h *hopTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	i := int(h.pin.Load())
	if i == rotate {
		i = (h.first + int(h.sent.Add(1)-1)) % len(h.nodes)
	}
	r = r.Clone(r.Context())
	r.URL.Host, r.Host = h.nodes[i].host, h.nodes[i].host
	resp, err := h.base.RoundTrip(r)
	if err == nil && r.Method == http.MethodGet && resp.StatusCode == http.StatusOK {
		h.gets.Add(1)
	}
	return resp, err
}

// session is one client session with its transport; owner is the index of
// the node its initialize went to.
type session struct {
	cs    *mcp.ClientSession
	hop   *hopTransport
	owner int
}

// forEach runs f on every session, openConc at a time, and returns the
// first error.
func forEach(ss []*session, f func(i int, s *session) error) error {
	errs := make(chan error, len(ss))
	sem := make(chan struct{}, openConc)
	var wg sync.WaitGroup
	for i, s := range ss {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			if err := f(i, s); err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// openSessions opens n Legacy sessions, session i initialized on node
// i mod len(nodes) and its later requests rotating over the nodes, and
// waits (30 s) until every one's GET stream was answered.
func openSessions(nodes []*node, n int, base http.RoundTripper) ([]*session, error) {
	var gets atomic.Int64
	ss := make([]*session, n)
	for i := range ss {
		h := &hopTransport{base: base, nodes: nodes, first: i % len(nodes), gets: &gets}
		h.pin.Store(rotate)
		ss[i] = &session{hop: h, owner: h.first}
	}
	err := forEach(ss, func(i int, s *session) error {
		c := mcp.NewClient(&mcp.Implementation{Name: "scale", Version: "1"}, nil)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		var err error
		s.cs, err = c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: nodes[s.owner].url, HTTPClient: &http.Client{Transport: s.hop}},
			&mcp.ClientSessionOptions{ProtocolVersion: legacyVersion})
		if err != nil {
			return fmt.Errorf("session %d (owner %s): %w", i, nodes[s.owner].name, err)
		}
		return nil
	})
	if err != nil {
		return ss, err
	}
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	for deadline := time.Now().Add(30 * time.Second); gets.Load() < int64(n); <-tick.C {
		if time.Now().After(deadline) {
			return ss, fmt.Errorf("%d of %d GET streams answered within 30s", gets.Load(), n)
		}
	}
	return ss, nil
}

// closeSessions ends every open session (DELETE) on the node offset
// places after its owner (0: the owner itself; 1: the next, which
// forwards it).
func closeSessions(ss []*session, offset int) error {
	return forEach(ss, func(i int, s *session) error {
		if s.cs == nil {
			return nil
		}
		s.hop.pin.Store(int64((s.owner + offset) % len(s.hop.nodes)))
		if err := s.cs.Close(); err != nil {
			return fmt.Errorf("session %d: DELETE: %w", i, err)
		}
		s.cs = nil
		return nil
	})
}

// callOn makes one tools/call echo on each session through node
// pick(session) and checks its answer.
func callOn(ss []*session, pick func(*session) int) error {
	return forEach(ss, func(i int, s *session) error {
		at := pick(s)
		s.hop.pin.Store(int64(at))
		text := fmt.Sprintf("s%d-n%d", i, at)
		res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": text}})
		if err != nil {
			return fmt.Errorf("session %d: tools/call through node %s: %w", i, s.hop.nodes[at].name, err)
		}
		if len(res.Content) != 1 {
			return fmt.Errorf("session %d: tools/call through node %s: %d content blocks, want 1", i, s.hop.nodes[at].name, len(res.Content))
		}
		if tc, ok := res.Content[0].(*mcp.TextContent); !ok || tc.Text != "echo:"+text {
			return fmt.Errorf("session %d: tools/call through node %s: unexpected result %+v", i, s.hop.nodes[at].name, res.Content)
		}
		return nil
	})
}
