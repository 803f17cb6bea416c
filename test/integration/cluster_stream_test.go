package integration

// Raw standalone GET streams against a cluster: resumption with
// Last-Event-ID on another node, and at most one live stream per session.

import (
	"bufio"
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmcp/vmcp/pkg/cluster/clustertest"
)

// clSSE reads a raw GET stream's events in the background.
type clSSE struct {
	resp   *http.Response
	events chan [2]string // id, data
	cancel context.CancelFunc
}

// clGET opens a raw standalone GET for session on endpoint.
func clGET(t *testing.T, endpoint, session, lastEventID string) *clSSE {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, endpoint, nil)
	req.Header.Set("Mcp-Session-Id", session)
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("Mcp-Protocol-Version", clLegacy)
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	s := &clSSE{resp: resp, events: make(chan [2]string, 100), cancel: cancel}
	t.Cleanup(s.close)
	go func() {
		defer close(s.events)
		sc := bufio.NewScanner(resp.Body)
		var id, data string
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "id: "):
				id = line[4:]
			case strings.HasPrefix(line, "data: "):
				data = line[6:]
			case line == "" && data != "":
				s.events <- [2]string{id, data}
				id, data = "", ""
			}
		}
	}()
	return s
}

func (s *clSSE) close() { s.cancel(); s.resp.Body.Close() }

// next returns the next event, failing after within.
func (s *clSSE) next(t *testing.T, within time.Duration) (id, data string) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		require.True(t, ok, "stream ended")
		return ev[0], ev[1]
	case <-time.After(within):
		t.Fatalf("no event within %s", within)
		return "", ""
	}
}

// none fails if an event arrives within d.
func (s *clSSE) none(t *testing.T, d time.Duration) {
	t.Helper()
	select {
	case ev, ok := <-s.events:
		if ok {
			t.Fatalf("unexpected event %v", ev)
		}
	case <-time.After(d):
	}
}

func TestClusterResumeOnAnotherNodeReplaysExactlyTheMissedEvents(t *testing.T) {
	clOnEachTopology(t, onResumeOnAnotherNodeReplaysExactlyTheMissedEvents)
}

func onResumeOnAnotherNodeReplaysExactlyTheMissedEvents(t *testing.T, topo clustertest.Redis) {
	e := clNewEnvTopo(t, topo, 3, false)
	a, b, c := e.nodes[0], e.nodes[1], e.nodes[2]
	cl := clConnect(t, a.url, clLegacy, false, nil)      // owned by a; no SDK GET stream
	observer := clConnect(t, a.url, clLegacy, true, nil) // tells us each list_changed went out
	id := cl.cs.ID()

	first := clGET(t, b.url, id, "")
	require.Equal(t, http.StatusOK, first.resp.StatusCode)
	clAddTool(t, e, "t1")
	observer.awaitListChanged(t, 1, stateWait)
	evID, data := first.next(t, 5*time.Second)
	require.Equal(t, "_0", evID)
	require.Contains(t, data, "notifications/tools/list_changed")
	first.close()

	clAddTool(t, e, "t2")
	observer.awaitListChanged(t, 1, stateWait)
	clAddTool(t, e, "t3")
	observer.awaitListChanged(t, 1, stateWait)

	resumed := clGET(t, c.url, id, "_0")
	require.Equal(t, http.StatusOK, resumed.resp.StatusCode)
	for _, want := range []string{"_1", "_2"} {
		evID, data = resumed.next(t, 5*time.Second)
		require.Equal(t, want, evID)
		require.Contains(t, data, "notifications/tools/list_changed")
		require.NotContains(t, data, observer.cs.ID())
	}
	resumed.none(t, 500*time.Millisecond)
	resumed.close()

	again := clGET(t, b.url, id, "_2")
	require.Equal(t, http.StatusOK, again.resp.StatusCode)
	again.none(t, 300*time.Millisecond) // nothing was missed after _2
}

// Before evict-and-replace, the owner's second GET (here through another
// node) got 409 for as long as its first stream's connection looked alive,
// e.g. dropped silently by a proxy: the second now replaces the first at
// once, on every node, and receives the next notification; the first ends.
func TestClusterSecondGETOfTheOwnerGot409InsteadOfReplacingTheStream(t *testing.T) {
	clOnEachTopology(t, onSecondGETOfTheOwnerGot409InsteadOfReplacingTheStream)
}

func onSecondGETOfTheOwnerGot409InsteadOfReplacingTheStream(t *testing.T, topo clustertest.Redis) {
	e := clNewEnvTopo(t, topo, 3, false)
	a, b, c := e.nodes[0], e.nodes[1], e.nodes[2]
	id := clConnect(t, a.url, clLegacy, false, nil).cs.ID()

	first := clGET(t, b.url, id, "") // its client never reads it again
	require.Equal(t, http.StatusOK, first.resp.StatusCode)
	start := time.Now()
	second := clGET(t, c.url, id, "")
	require.Equal(t, http.StatusOK, second.resp.StatusCode, "the owner's new GET replaces the live one")
	require.Less(t, time.Since(start), time.Second, "at once")
	ended := time.After(10 * time.Second)
	for open := true; open; { // the replaced stream ends
		select {
		case _, open = <-first.events:
		case <-ended:
			t.Fatal("the replaced stream did not end")
		}
	}
	clAddTool(t, e, "after-replace")
	_, data := second.next(t, 10*time.Second)
	require.Contains(t, data, "notifications/tools/list_changed", "the replacement gets the next notification")
}
